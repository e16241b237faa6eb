//! `xlatperf generate`: the man pages and shell completions, generated from the command line's
//! own definition (clap_mangen, clap_complete), so that they cannot drift from `--help`.
//! scripts/package.sh puts them into the Debian package.

use anyhow::{Context, Result};
use clap::{Args, Command, Subcommand};
use clap_complete::Shell;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// Man pages, one per command and subcommand (xlatperf.1, xlatperf-throughput.1,
    /// xlatperf-lab-up.1, ...), into DIR.
    Man {
        /// The directory to write the pages into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// The completion script of SHELL, to standard output.
    Completion {
        #[arg(value_enum)]
        shell: Shell,
    },
}

/// Run `generate` for the command line `cmd` (the whole of xlatperf's).
pub fn run(args: &GenerateArgs, mut cmd: Command) -> Result<()> {
    match &args.what {
        What::Man { out } => {
            std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
            // The pages' date is the build's (`SOURCE_DATE_EPOCH`, which dpkg-buildpackage sets
            // from debian/changelog: two builds of one source give the same pages), as
            // YYYY-MM-DD; none without it.
            let date = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.parse::<u64>().ok());
            let date = date.map(|t| crate::output::rfc3339(t)[..10].to_string()).unwrap_or_default();
            cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            let n = write_pages(&cmd, out, &date)?;
            eprintln!("{n} man pages in {}", out.display());
        }
        What::Completion { shell } => clap_complete::generate(*shell, &mut cmd, "xlatperf", &mut std::io::stdout()),
    }
    Ok(())
}

/// The page of `cmd` and of each of its subcommands, into `dir`; how many.
fn write_pages(cmd: &Command, dir: &Path, date: &str) -> Result<usize> {
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("xlatperf {}", env!("CARGO_PKG_VERSION")))
        .manual("xlatperf")
        .date(date);
    let path = dir.join(man.get_filename());
    let mut text = Vec::new();
    man.render(&mut text).with_context(|| format!("cannot render {}", path.display()))?;
    crate::output::write_atomic(&path, &text)?;
    let mut n = 1;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        n += write_pages(sub, dir, date)?;
    }
    Ok(n)
}
