//! Encryption at rest for secrets (app setting values, signing keys): AES-256-GCM under the
//! key from `SHOAL_SECRET_KEY`. Each ciphertext is `nonce (12 bytes) || sealed`, and the row's
//! identity is bound in as associated data, so a value copied to another row fails to decrypt.

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::StoreError;

/// The 32-byte master key. `Debug` never shows it.
#[derive(Clone)]
pub struct SecretKey([u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(********)")
    }
}

impl SecretKey {
    /// Parses base64 of exactly 32 bytes.
    pub fn from_base64(text: &str) -> Result<SecretKey, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| "must be base64 (e.g. `openssl rand -base64 32`)".to_string())?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| format!("must decode to 32 bytes, got {}", b.len()))?;
        // A placeholder (all zeros, one repeated byte) is not a key; refuse it rather than
        // encrypt every secret under it.
        if key.iter().all(|b| *b == key[0]) {
            return Err(
                "is a placeholder (one repeated byte), not random: use `openssl rand -base64 32`"
                    .into(),
            );
        }
        Ok(SecretKey(key))
    }

    pub fn generate() -> SecretKey {
        let mut key = [0u8; 32];
        // The system RNG failing is not recoverable; every caller would have to abort.
        SystemRandom::new()
            .fill(&mut key)
            .expect("system random number generator failed");
        SecretKey(key)
    }

    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }
}

/// `len` bytes from the system's secure random number generator (for generated secrets).
pub fn random_bytes(len: usize) -> Result<Vec<u8>, StoreError> {
    let mut bytes = vec![0u8; len];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| StoreError::Crypto("no randomness".into()))?;
    Ok(bytes)
}

/// Seals and opens secrets with the master key.
#[derive(Clone)]
pub struct Cipher {
    key: std::sync::Arc<LessSafeKey>,
    rng: SystemRandom,
}

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cipher")
    }
}

impl Cipher {
    pub fn new(key: &SecretKey) -> Cipher {
        let unbound =
            UnboundKey::new(&AES_256_GCM, &key.0).expect("32 bytes is a valid AES-256 key");
        Cipher {
            key: std::sync::Arc::new(LessSafeKey::new(unbound)),
            rng: SystemRandom::new(),
        }
    }

    pub fn encrypt(&self, plaintext: &[u8], associated: &str) -> Result<Vec<u8>, StoreError> {
        let mut nonce = [0u8; NONCE_LEN];
        self.rng
            .fill(&mut nonce)
            .map_err(|_| StoreError::Crypto("no randomness".into()))?;
        let mut sealed = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(associated.as_bytes()),
                &mut sealed,
            )
            .map_err(|_| StoreError::Crypto("sealing failed".into()))?;
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    pub fn decrypt(&self, ciphertext: &[u8], associated: &str) -> Result<Vec<u8>, StoreError> {
        if ciphertext.len() < NONCE_LEN {
            return Err(StoreError::Crypto("ciphertext too short".into()));
        }
        let (nonce, sealed) = ciphertext.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| StoreError::Crypto("bad nonce".into()))?;
        let mut buf = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(associated.as_bytes()), &mut buf)
            .map_err(|_| {
                StoreError::Crypto("authentication failed (wrong SHOAL_SECRET_KEY?)".into())
            })?;
        Ok(plain.to_vec())
    }

    pub fn decrypt_string(
        &self,
        ciphertext: &[u8],
        associated: &str,
    ) -> Result<String, StoreError> {
        String::from_utf8(self.decrypt(ciphertext, associated)?)
            .map_err(|_| StoreError::Crypto("decrypted value is not UTF-8".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_same_associated_data() {
        let cipher = Cipher::new(&SecretKey::generate());
        let sealed = cipher.encrypt(b"AccountKey=abc", "t/app/setting").unwrap();
        assert_ne!(&sealed[NONCE_LEN..], b"AccountKey=abc");
        assert_eq!(
            cipher.decrypt(&sealed, "t/app/setting").unwrap(),
            b"AccountKey=abc"
        );
    }

    #[test]
    fn value_moved_to_another_row_does_not_decrypt() {
        let cipher = Cipher::new(&SecretKey::generate());
        let sealed = cipher.encrypt(b"secret", "t/app/a").unwrap();
        assert!(cipher.decrypt(&sealed, "t/app/b").is_err());
    }

    #[test]
    fn wrong_key_does_not_decrypt() {
        let sealed = Cipher::new(&SecretKey::generate())
            .encrypt(b"secret", "x")
            .unwrap();
        assert!(
            Cipher::new(&SecretKey::generate())
                .decrypt(&sealed, "x")
                .is_err()
        );
    }

    #[test]
    fn secret_key_parsing() {
        let key = SecretKey::generate();
        assert!(SecretKey::from_base64(&key.to_base64()).is_ok());
        assert!(
            SecretKey::from_base64("c2hvcnQ=")
                .unwrap_err()
                .contains("32 bytes")
        );
        assert!(SecretKey::from_base64("not base64!").is_err());
        let zeros = STANDARD.encode([0u8; 32]);
        assert!(
            SecretKey::from_base64(&zeros)
                .unwrap_err()
                .contains("placeholder")
        );
        assert_eq!(format!("{key:?}"), "SecretKey(********)");
    }
}
