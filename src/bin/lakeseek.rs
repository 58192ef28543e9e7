//! The `lakeseek` command line: see `lakeseek --help` and the README. The commands live in
//! the library (`lakeseek::cli`, feature `cli`), so everything they do is one library call.

fn main() -> std::process::ExitCode {
    lakeseek::cli::main()
}
