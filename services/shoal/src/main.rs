//! `shoal`: one binary with a sub-command per role. See `cli.rs` for the commands and their
//! configuration.

mod cli;
mod client;
mod commands;
mod dev;
mod local_bus;
mod process_name;
mod scheduler;
mod serve;
mod signals;
mod telemetry;
mod tokens;
mod traces;
mod worker;

use clap::Parser;

/// mimalloc rather than the system allocator: request handling allocates many small, short-lived
/// buffers, and glibc's malloc/free were the largest user-space cost in the GET profile.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    telemetry::init(cli.command.log_format());
    match commands::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // A client command's failure carries the exit code scripts test (docs/cli.md).
        Err(err) => match err.downcast_ref::<client::Failure>() {
            Some(failure) => {
                eprintln!("error: {failure}");
                std::process::ExitCode::from(failure.code)
            }
            None => {
                eprintln!("error: {err:#}");
                std::process::ExitCode::FAILURE
            }
        },
    }
}
