//! Which module runs each sub-command.

use anyhow::Context;
use shoal_store::pool::migrate;

use crate::cli::{Cli, Command, KeysCommand};

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
    }
}
