//! Which module runs each sub-command.

use anyhow::Context;
use shoal_store::pool::migrate;

use crate::cli::{Cli, Command, KeysCommand};
use crate::client::{self, ClientCommand};

async fn run_client(command: ClientCommand) -> anyhow::Result<()> {
    Ok(client::run(command).await?)
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Migrate(args) => {
            migrate(args.url.expose())
                .await
                .context("migrating the database")?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Serve(args) => crate::serve::run(args).await,
        Command::Openapi => {
            let json = shoal_api::openapi()
                .to_pretty_json()
                .context("rendering the OpenAPI document")?;
            println!("{json}");
            Ok(())
        }
        Command::Token(args) => {
            println!("{}", crate::tokens::token(&args).await?);
            Ok(())
        }
        Command::Keys(KeysCommand::Rotate(args)) => crate::tokens::rotate_keys(args).await,
        Command::Worker(args) => crate::worker::run(args).await,
        Command::Scheduler(args) => crate::scheduler::run(args).await,
        Command::Dev(args) => crate::dev::run(args).await,
        Command::LocalBus(args) => crate::local_bus::run(args).await,
        Command::Login(args) => run_client(ClientCommand::Login(args)).await,
        Command::Logout(args) => run_client(ClientCommand::Logout(args)).await,
        Command::App(group) => run_client(ClientCommand::App(group)).await,
        Command::Func(group) => run_client(ClientCommand::Func(group)).await,
        Command::Scale(group) => run_client(ClientCommand::Scale(group)).await,
        Command::Invocations(group) => run_client(ClientCommand::Invocations(group)).await,
        Command::Poison(group) => run_client(ClientCommand::Poison(group)).await,
        Command::Breaker(group) => run_client(ClientCommand::Breaker(group)).await,
        Command::Send(command) => run_client(ClientCommand::Send(command)).await,
        Command::Diagnostics(args) => run_client(ClientCommand::Diagnostics(args)).await,
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "shoal", &mut std::io::stdout());
            Ok(())
        }
    }
}
