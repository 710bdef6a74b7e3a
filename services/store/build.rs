// `pool::MIGRATOR` embeds ../../migrations when the crate compiles; a new or changed migration
// must rebuild it (sqlx's documented build script for `migrate!`).
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
