//! dbstart: starts the runner daemons of the named hosts (locally for this host, over ssh
//! for the others), with the jobrunner binary of each host's platform.

use clap::Parser;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Start the runners of the named hosts of hosts.toml (here for this host, over ssh for the others)."
)]
struct Args {
    #[command(flatten)]
    common: nowdb::cli::SiteArgs,
    /// Host names as in hosts.toml.
    #[arg(required = true)]
    hosts: Vec<String>,
    /// The ssh command (default: ssh -o BatchMode=yes -o ConnectTimeout=10).
    #[arg(long)]
    ssh: Option<String>,
}

fn main() -> ExitCode {
    let a = nowdb::cli::parse::<Args>("dbstart");
    let site = nowdb::solve::Site::new(&a.common.site);
    let r = nowdb::monitor::command::dbstart_command(
        &site,
        &a.hosts,
        &a.ssh,
        a.common.json,
        &mut std::io::stdout().lock(),
    );
    nowdb::cli::finish("dbstart", r)
}
