//! Drive the lab by hand: `cargo run -p xlat-lab --example lab -- up router4 | status | down`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["up", t] | ["up", t, "--replace"] => t.parse().and_then(|t| {
            let opts = xlat_lab::UpOptions {
                replace: args.len() == 3,
                ..Default::default()
            };
            xlat_lab::up(t, &opts).map(|info| format!("lab {} is up; configuration: {}", info.topology, info.config_path.display()))
        }),
        ["down"] => xlat_lab::down().map(|r| r.to_string()),
        ["status"] => xlat_lab::status().map(|s| s.to_string()),
        ["neigh", iface] => xlat_lab::dut_neighbours(iface).map(|n| format!("{n:?}")),
        ["dut", rest @ ..] => xlat_lab::dut_exec(rest),
        _ => {
            eprintln!("usage: lab up <router4|router6|siit|nat44|nat64|nat66> [--replace] | down | status | neigh <iface> | dut <cmd...>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(text) => {
            println!("{}", text.trim_end());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
