//! The dashboard's bundle as a browser loads it: every file of `web/dist` but source maps
//! (which a browser fetches only with its developer tools open), raw and gzipped at level 9.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use flate2::Compression;
use flate2::write::GzEncoder;

#[derive(Debug)]
pub struct BundleFile {
    pub path: PathBuf,
    pub bytes: u64,
    pub gzip_bytes: u64,
}

#[derive(Debug)]
pub struct Bundle {
    pub files: Vec<BundleFile>,
}

impl Bundle {
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }

    pub fn gzip_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.gzip_bytes).sum()
    }
}

pub fn measure(dist: &Path) -> Result<Bundle> {
    if !dist.join("index.html").is_file() {
        bail!(
            "{} has no index.html: build the dashboard first (`make web`)",
            dist.display()
        );
    }
    let mut files = Vec::new();
    for path in files_under(dist)? {
        if path.extension().is_some_and(|ext| ext == "map") {
            continue;
        }
        let content =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        files.push(BundleFile {
            bytes: content.len() as u64,
            gzip_bytes: gzip_len(&content)?,
            path: path.strip_prefix(dist).unwrap_or(&path).to_owned(),
        });
    }
    Ok(Bundle { files })
}

/// The size of `content` gzipped at level 9 (`gzip -9`).
fn gzip_len(content: &[u8]) -> Result<u64> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(content)?;
    Ok(encoder.finish()?.len() as u64)
}

fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_counts_every_file_but_source_maps_raw_and_gzipped() {
        let dir = std::env::temp_dir().join(format!("shoal-bench-bundle-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("assets")).unwrap();
        let script = "console.log('shoal');\n".repeat(200);
        std::fs::write(dir.join("index.html"), "<!doctype html><title>x</title>").unwrap();
        std::fs::write(dir.join("assets/index.js"), &script).unwrap();
        std::fs::write(dir.join("assets/index.js.map"), "{}").unwrap();

        let bundle = measure(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();

        let names: Vec<_> = bundle.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            names,
            [
                PathBuf::from("assets/index.js"),
                PathBuf::from("index.html")
            ]
        );
        assert_eq!(bundle.bytes(), script.len() as u64 + 31);
        // Repetitive text shrinks a lot; gzip's header and trailer alone are 18 bytes.
        assert!(
            bundle.files[0].gzip_bytes < 100,
            "{}",
            bundle.files[0].gzip_bytes
        );
        assert!(bundle.gzip_bytes() > 36);
    }

    #[test]
    fn a_missing_build_says_how_to_make_it() {
        let error = measure(Path::new("/nonexistent/web/dist")).unwrap_err();
        assert!(error.to_string().contains("make web"), "{error}");
    }
}
