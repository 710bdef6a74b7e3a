-- Signing key rotation (`shoal keys rotate`, `POST /v1/signingKeys/rotate`). A rotation adds a
-- key that signs from then on and gives every older key a deadline: until `verify_until` the
-- old key stays in the JWK set and still verifies the tokens it signed, so they live out their
-- lifetime; after it, they are refused. The key without a deadline (the newest, if a race ever
-- left two) signs.
alter table signing_keys add column verify_until timestamptz;
