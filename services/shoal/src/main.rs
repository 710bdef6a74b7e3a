//! `shoal`: one binary with a sub-command per role. See `cli.rs` for the commands and their
//! configuration.

mod cli;
mod commands;
mod dev;
mod telemetry;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    telemetry::init(cli.command.log_format());
    match commands::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
