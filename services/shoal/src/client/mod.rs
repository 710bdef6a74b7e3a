//! The client commands for the people who use Shoal (docs/cli.md): sign in once with
//! `shoal login`, then manage apps, settings and functions and operate them through the
//! management API, with a table for people or `--output json` for scripts and exit codes
//! scripts can test ([`failure`]).

pub mod api;
mod apps;
pub mod failure;
mod functions;
mod invocations;
mod login;
mod operations;
mod output;
mod profiles;
mod project;
mod send;
mod session;
mod settings;

use clap::{Args, Subcommand};

pub use apps::AppCommand;
pub use failure::Failure;
pub use functions::FuncCommand;
pub use invocations::InvocationsCommand;
pub use login::{LoginArgs, LogoutArgs};
pub use operations::{BreakerCommand, PoisonCommand, ScaleCommand};
pub use output::Output;
pub use send::SendArgs;

/// Which profile, tenant and output every client command takes (before or after its
/// sub-command).
#[derive(Debug, Args)]
pub struct Target {
    /// The profile `shoal login` saved.
    #[arg(long, env = "SHOAL_PROFILE", default_value = "default", global = true)]
    pub profile: String,
    /// The tenant to act in (default: the profile's, else the credential's).
    #[arg(long, env = "SHOAL_TENANT", global = true)]
    pub tenant: Option<String>,
    /// `table` for people, `json` for scripts (the API's documents, unchanged).
    #[arg(long, short = 'o', value_enum, default_value = "table", global = true)]
    pub output: Output,
}

/// A client command group with its target options.
#[derive(Debug, Args)]
pub struct Group<C: Subcommand> {
    #[command(flatten)]
    pub target: Target,
    #[command(subcommand)]
    pub command: C,
}

#[derive(Debug, Args)]
pub struct DiagnosticsArgs {
    #[command(flatten)]
    pub target: Target,
    /// The app to check.
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
}

/// `shoal send` with its target options.
#[derive(Debug, Args)]
pub struct SendCommand {
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub args: SendArgs,
}

/// The client commands, as `commands::run` hands them over.
pub enum ClientCommand {
    Login(LoginArgs),
    Logout(LogoutArgs),
    App(Group<AppCommand>),
    Func(Group<FuncCommand>),
    Scale(Group<ScaleCommand>),
    Invocations(Group<InvocationsCommand>),
    Poison(Group<PoisonCommand>),
    Breaker(Group<BreakerCommand>),
    Send(SendCommand),
    Diagnostics(DiagnosticsArgs),
}

pub async fn run(command: ClientCommand) -> Result<(), Failure> {
    match command {
        ClientCommand::Login(args) => login::login(args).await,
        ClientCommand::Logout(args) => login::logout(args),
        ClientCommand::App(g) => {
            let api = session::connect(&g.target).await?;
            apps::run(&api, g.target.output, g.command).await
        }
        ClientCommand::Func(g) => {
            let api = session::connect(&g.target).await?;
            functions::run(&api, g.target.output, g.command).await
        }
        ClientCommand::Scale(g) => {
            let api = session::connect(&g.target).await?;
            operations::scale(&api, g.target.output, g.command).await
        }
        ClientCommand::Invocations(g) => {
            let api = session::connect(&g.target).await?;
            invocations::run(&api, g.target.output, g.command).await
        }
        ClientCommand::Poison(g) => {
            let api = session::connect(&g.target).await?;
            operations::poison(&api, g.target.output, g.command).await
        }
        ClientCommand::Breaker(g) => {
            let api = session::connect(&g.target).await?;
            operations::breaker(&api, g.target.output, g.command).await
        }
        ClientCommand::Send(command) => {
            let api = session::connect(&command.target).await?;
            send::send(&api, command.target.output, command.args).await
        }
        ClientCommand::Diagnostics(args) => {
            let api = session::connect(&args.target).await?;
            operations::diagnostics(&api, args.target.output, &args.app).await
        }
    }
}
