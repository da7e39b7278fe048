//! Regression tests of issue 14: no panic on valid input, saturating time
//! limits, safe output files, signals, bounded and escaped messages, and
//! `validate`'s exit codes.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use memplan::plan::read_plan;
use memplan::problem::read_problem;
use memplan::{validate, Lifetimes};
use tempfile::TempDir;

mod common;
use common::*;

/// The two-buffer instance of the issue: `a` fixed at 4, `b` free, both
/// of size 8 and alive together; capacity 18 leaves no room for `b`.
const TWO_BUFFERS: &str = "id,lower,upper,size,offset\na,0,2,8,4\nb,0,2,8,\n";

#[test]
fn two_buffer_capacity_never_panics() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    // Verbatim from the issue: exited 101 every time.
    let v = json_code(
        memplan()
            .args(["solve", "--solver", "search", "--capacity", "18"])
            .args(["--time-limit", "0.1", "--json"])
            .arg(&input),
        1,
    );
    assert_eq!(v["status"], "not_found");
    // The search is incomplete with fixed buffers and says so; it does not
    // claim the clock stopped it.
    assert!(v["reason"].as_str().unwrap().contains("not complete"));
    assert_eq!(v["stopped"], serde_json::Value::Null);
    // Auto panicked in about 12 of 20 runs; tela proves it infeasible.
    for _ in 0..20 {
        let out = memplan()
            .args(["solve", "--capacity", "18", "--json"])
            .arg(&input)
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        assert_eq!(json(&out)["reason"], "proven infeasible");
    }
}

#[test]
fn huge_time_limits_saturate() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    for limit in ["9.3e18", "1.85e19", "1e300"] {
        for solver in ["search", "tela", "greedy", "boxing", "auto"] {
            memplan()
                .args(["solve", "--solver", solver, "--time-limit", limit, "--json"])
                .arg(&input)
                .assert()
                .success();
        }
        memplan()
            .args(["bench", "--solvers", "search,greedy", "--time-limit", limit])
            .arg(&input)
            .assert()
            .success();
    }
}

/// A plan cut by the clock says so in the JSON (`"stopped": "time_limit"`,
/// the fallback counted), and is still complete and valid.
#[test]
fn a_plan_cut_by_the_time_limit_says_so() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("random.csv");
    generate("random", 20_000, Some(3), &input);
    let output = dir.path().join("plan.csv");
    let v = json_ok(
        memplan()
            .args([
                "solve",
                "--solver",
                "greedy",
                "--time-limit",
                "0",
                "--json",
                "-o",
            ])
            .arg(&output)
            .arg(&input),
    );
    assert_eq!(v["stopped"], "time_limit");
    assert_eq!(v["optimal"], false);
    assert!(v["counters"]["fallback"].as_u64().unwrap() > 0, "{v}");
    let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
    validate(&problem, &read_plan(&output, &problem).unwrap()).unwrap();
    // Without a limit nothing is cut.
    let small = file(&dir, "two.csv", TWO_BUFFERS);
    let v = json_ok(memplan().args(["solve", "--json"]).arg(&small));
    assert_eq!(v["stopped"], serde_json::Value::Null);
}

#[test]
fn output_equal_to_the_input_is_refused() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    fails(
        memplan().args(["solve", "-o"]).arg(&input).arg(&input),
        2,
        "is also an input",
    );
    assert_eq!(read(&input), TWO_BUFFERS);
    // Through a symlink too.
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    memplan()
        .args(["solve", "-o"])
        .arg(&link)
        .arg(&input)
        .assert()
        .code(2);
    assert_eq!(read(&input), TWO_BUFFERS);
}

#[test]
fn a_symlinked_output_writes_its_target_and_keeps_the_link() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    let target = file(&dir, "target.csv", "old\n");
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink("target.csv", &link).unwrap();
    memplan()
        .args(["solve", "-o"])
        .arg(&link)
        .arg(&input)
        .assert()
        .success();
    assert!(is_symlink(&link));
    let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
    let plan = read_plan(&target, &problem).unwrap();
    validate(&problem, &plan).unwrap();
    // A link to nowhere is refused, not followed.
    let dangling = dir.path().join("dangling.csv");
    std::os::unix::fs::symlink("missing.csv", &dangling).unwrap();
    fails(
        memplan().args(["solve", "-o"]).arg(&dangling).arg(&input),
        2,
        "missing file",
    );
    assert!(!dir.path().join("missing.csv").exists());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// Whether `path` is a symlink (not followed).
fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Hidden temporary files left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".memplan.tmp"))
        .collect()
}

#[test]
fn plan_to_standard_output_sends_the_report_to_stderr() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    for target in ["-", "/dev/stdout", "/dev/fd/1"] {
        let out = memplan()
            .args(["solve", "-q", "-o", target])
            .arg(&input)
            .assert()
            .success();
        let output = out.get_output();
        let stdout = String::from_utf8(output.stdout.clone()).unwrap();
        assert!(
            stdout.starts_with("id,lower,upper,size,offset\n"),
            "{target}: {stdout}"
        );
        assert!(!stdout.contains("makespan"), "{target}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("makespan"));
    }
    // `-o /dev/stdout` with stdout redirected to a file writes the file and
    // leaves `/dev/stdout` a link (it was replaced by a regular file).
    let redirected = dir.path().join("redirected.csv");
    let status = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
        .args(["solve", "-q", "-o", "/dev/stdout"])
        .arg(&input)
        .stdout(std::fs::File::create(&redirected).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::symlink_metadata("/dev/stdout")
        .unwrap()
        .file_type()
        .is_symlink());
    let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
    validate(&problem, &read_plan(&redirected, &problem).unwrap()).unwrap();
}

/// Standard error redirected to a file (appending): `-o /dev/stderr` and
/// `-o /dev/fd/2` append the plan to it, they do not replace the file and
/// lose what it held; another descriptor's file is refused.
#[test]
fn plan_to_standard_error_appends_to_its_file() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    for target in ["/dev/stderr", "/dev/fd/2"] {
        let log = dir.path().join("build.log");
        std::fs::write(&log, "precious\n").unwrap();
        let appending = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let status = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
            .args(["solve", "-q", "-o", target])
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(appending)
            .status()
            .unwrap();
        assert!(status.success(), "{target}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.starts_with("precious\nid,lower,upper,size,offset\n"),
            "{target}: {text}"
        );
    }
    // Another descriptor's regular file (here standard input's, opened
    // read-only) is refused and left as it was.
    let other = file(&dir, "other.txt", "kept\n");
    let out = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
        .args(["solve", "-q", "-o", "/proc/self/fd/0"])
        .arg(&input)
        .stdin(std::fs::File::open(&other).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("open descriptor"));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "kept\n");
}

/// A reader that closes standard output early (`memplan ... -o - | head
/// -1`) ends memplan quietly with status 0, not with an error message.
#[test]
fn a_closed_standard_output_ends_quietly() {
    use std::io::{BufRead, BufReader};
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
        .args([
            "generate",
            "--kind",
            "random",
            "--buffers",
            "200000",
            "-o",
            "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "id,lower,upper,size\n");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// A regular file the user may not write is refused, as the shell's `>`
/// would refuse it (replacing it through a temporary file would not ask).
#[cfg(unix)]
#[test]
fn a_read_only_output_is_refused_unless_the_user_may_write_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    let plan = file(&dir, "plan.csv", "kept\n");
    std::fs::set_permissions(&plan, std::fs::Permissions::from_mode(0o444)).unwrap();
    let may_write = std::fs::OpenOptions::new().write(true).open(&plan).is_ok();
    let out = memplan()
        .args(["solve", "-q", "-o"])
        .arg(&plan)
        .arg(&input)
        .assert();
    if may_write {
        // Root (as in CI containers) may write any file, as with `>`.
        out.success();
    } else {
        out.code(2)
            .stderr(predicates::str::contains("cannot write"));
        assert_eq!(std::fs::read_to_string(&plan).unwrap(), "kept\n");
    }
}

#[test]
fn generate_and_plot_use_the_same_safe_output() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("gen.csv");
    generate("layered", 50, None, &input);
    let plan = dir.path().join("plan.csv");
    memplan()
        .args(["solve", "--solver", "greedy", "-o"])
        .arg(&plan)
        .arg(&input)
        .assert()
        .success();
    // Plot refuses to draw over its own inputs.
    memplan()
        .arg("plot")
        .arg(&input)
        .arg(&plan)
        .arg("-o")
        .arg(&plan)
        .assert()
        .code(2);
    let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
    validate(&problem, &read_plan(&plan, &problem).unwrap()).unwrap();
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

#[test]
fn messages_escape_and_cut_user_data() {
    let dir = TempDir::new().unwrap();
    // The message of `solve` refusing the file `name` holding `text`.
    let refused = |name: &str, text: &str| {
        let input = file(&dir, name, text);
        let out = memplan().arg("solve").arg(&input).assert().code(2);
        String::from_utf8(out.get_output().stderr.clone()).unwrap()
    };
    let long = "9".repeat(100_000);
    let stderr = refused("bad.csv", &format!("id,lower,upper,size\na,0,1,x{long}\n"));
    assert!(stderr.len() < 400, "{} bytes", stderr.len());
    assert!(stderr.contains("(100001 bytes)"), "{stderr}");
    // Escape sequences in ids are shown escaped.
    let stderr = refused(
        "ids.csv",
        "id,lower,upper,size\n\u{1b}[31mred,0,1,8\n\u{1b}[31mred,0,1,8\n",
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(stderr.contains("duplicate id `\\u{1b}[31mred`"), "{stderr}");
    // A NUL byte too, not printed as if the id ended there.
    let stderr = refused("nul.csv", "id,lower,upper,size\nx\0y,0,1,8\nx\0y,0,1,8\n");
    assert!(!stderr.contains('\0'), "{stderr:?}");
    assert!(stderr.contains("duplicate id `x\\u{0}y`"), "{stderr}");
}

#[test]
fn overlong_lines_and_open_quotes_are_located() {
    let dir = TempDir::new().unwrap();
    let huge = "x".repeat(2 << 20);
    let input = file(
        &dir,
        "long.csv",
        &format!("id,lower,upper,size\na,0,1,8\n{huge},0,1,8\n"),
    );
    fails(
        memplan().arg("stats").arg(&input),
        2,
        "long.csv:3: line longer than 1048576 bytes",
    );
    let input = file(
        &dir,
        "quote.csv",
        "id,lower,upper,size\na,0,1,8\n\"b,0,1,8\nc,0,1,8\n",
    );
    fails(
        memplan().arg("stats").arg(&input),
        2,
        "quote.csv:3: unterminated quoted field",
    );
    // Quotes that close, and quotes inside unquoted fields, are fine.
    let input = file(
        &dir,
        "fine.csv",
        "id,lower,upper,size\n\"a,\"\"x\"\"\",0,1,8\nb\"c,0,1,8\n",
    );
    memplan().arg("stats").arg(&input).assert().success();
}

#[test]
fn validate_calls_id_mismatches_invalid_plans() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "in.csv", "id,lower,upper,size\na,0,4,8\nb,2,6,8\n");
    for (name, text, says) in [
        (
            "missing.csv",
            "id,offset\na,0\n",
            "no offset for buffer `b`",
        ),
        (
            "extra.csv",
            "id,offset\na,0\nb,8\nc,0\n",
            "unknown buffer id `c`",
        ),
        (
            "twice.csv",
            "id,offset\na,0\na,0\nb,8\n",
            "duplicate id `a`",
        ),
    ] {
        let plan = file(&dir, name, text);
        let v = json_code(
            memplan()
                .args(["validate", "--json"])
                .arg(&input)
                .arg(&plan),
            1,
        );
        assert_eq!(v["valid"], false);
        assert!(v["error"].as_str().unwrap().contains(says), "{v}");
    }
    // An unreadable plan is still bad input; with --json, no verdict but
    // the message, and the columns a plan needs.
    let plan = file(&dir, "noid.csv", "offset\n0\n");
    validate_plan(&input, &plan).code(2);
    let bad_input = |problem: &Path| {
        let v = json_code(
            memplan()
                .args(["validate", "--json"])
                .arg(problem)
                .arg(&plan),
            2,
        );
        assert_eq!(v["valid"], serde_json::Value::Null);
        v["error"].as_str().unwrap().to_string()
    };
    let error = bad_input(&input);
    assert!(
        error.ends_with("noid.csv:1: missing required column `id` (expected columns: id|buffer|buffer_id, offset)"),
        "{error}"
    );
    // So is an unreadable problem.
    let broken = file(&dir, "broken.csv", "id,lower,upper,size\na,0,4,8k\n");
    let error = bad_input(&broken);
    assert!(error.contains("broken.csv:2: column `size`"), "{error}");
}

/// A solve that runs until stopped: boxing with a budget of iterations it
/// cannot spend, on an instance it cannot solve optimally.
fn long_solve(dir: &TempDir, output: &Path) -> std::process::Child {
    long_solve_with(dir, output, &[])
}

/// [`long_solve`] with environment variables set.
fn long_solve_with(dir: &TempDir, output: &Path, env: &[(&str, &str)]) -> std::process::Child {
    let input = dir.path().join("random.csv");
    if !input.exists() {
        memplan()
            .args([
                "generate",
                "--kind",
                "random",
                "--buffers",
                "3000",
                "--seed",
                "3",
                "-o",
            ])
            .arg(&input)
            .assert()
            .success();
    }
    Process::new(assert_cmd::cargo::cargo_bin("memplan"))
        .args(["solve", "--solver", "boxing", "--iterations", "4000000000"])
        .args(["--time-limit", "60", "--json", "-o"])
        .arg(output)
        .arg(&input)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &std::process::Child, name: &str) {
    let status = Process::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn first_signal_writes_the_best_plan_second_exits_at_once() {
    let dir = TempDir::new().unwrap();
    for name in ["INT", "TERM"] {
        let output = dir.path().join(format!("plan-{name}.csv"));
        let child = long_solve(&dir, &output);
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, name);
        let signalled = Instant::now();
        let out = child.wait_with_output().unwrap();
        // Prompt: well under the 60 s budget (the bound in the issue,
        // 100 ms, is measured by hand; test machines are noisy).
        assert!(signalled.elapsed() < Duration::from_secs(5));
        assert!(out.status.success(), "{name}: {out:?}");
        let v = json(&out.stdout);
        assert_eq!(v["stopped"], "interrupted");
        // The signal came during the solve: the latency to the solver's
        // return is within the solve's time, the check after it apart.
        let latency = v["stop_latency"].as_f64().unwrap();
        assert!(latency >= 0.0 && latency <= v["seconds"].as_f64().unwrap());
        assert!(v["check_seconds"].as_f64().unwrap() >= 0.0);
        let input = dir.path().join("random.csv");
        let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
        validate(&problem, &read_plan(&output, &problem).unwrap()).unwrap();
    }
    // Two signals: exit 130 at once, removing the temporary file. The
    // debug build waits before renaming it (a test hook, compiled out of
    // release builds), so the second signal comes while it exists.
    if !cfg!(debug_assertions) {
        eprintln!("skipped the second signal: the pause hook needs a debug build");
        return;
    }
    for (first, second) in [("TERM", "TERM"), ("INT", "INT"), ("INT", "TERM")] {
        let output = dir.path().join(format!("plan-{first}-{second}.csv"));
        let child = long_solve_with(
            &dir,
            &output,
            &[("MEMPLAN_TEST_PAUSE_BEFORE_RENAME", "20000")],
        );
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, first);
        // The plan is written, then the pause: the temporary file is there.
        let waited = Instant::now();
        while leftovers(dir.path()).is_empty() && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(leftovers(dir.path()).len(), 1, "{first} {second}");
        signal(&child, second);
        exited_at_once(child, &format!("{first} {second}"), dir.path(), &output);
    }
}

/// Waits for `child`, signalled twice just now: it must exit at once with
/// 130, saying so, leaving no temporary file in `dir` and no `output`.
fn exited_at_once(child: std::process::Child, case: &str, dir: &Path, output: &Path) {
    let signalled = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(signalled.elapsed() < Duration::from_secs(5), "{case}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{case}: {:?} {stderr}",
        out.status
    );
    assert!(stderr.contains("memplan: interrupted"), "{case}: {stderr}");
    assert!(out.stdout.is_empty(), "{case}: no report");
    assert_eq!(leftovers(dir), Vec::<String>::new(), "{case}");
    assert!(!output.exists(), "{case}: no plan");
}

/// A second signal while the solve itself still runs (not only during the
/// write) exits at once. To land both signals inside the solve without a
/// race, the process is frozen there (SIGSTOP), given two different
/// signals (two of the same kind would merge while pending) and thawed:
/// they arrive together, the first stops the solve and the second ends the
/// process with 130 before any output file exists.
#[test]
fn a_second_signal_during_the_solve_exits_at_once() {
    let dir = TempDir::new().unwrap();
    for (first, second) in [("INT", "TERM"), ("TERM", "INT"), ("INT", "HUP")] {
        let output = dir.path().join(format!("plan-{first}-{second}.csv"));
        let child = long_solve(&dir, &output);
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, "STOP");
        signal(&child, first);
        signal(&child, second);
        signal(&child, "CONT");
        exited_at_once(child, &format!("{first} {second}"), dir.path(), &output);
    }
}

/// The temporary file is made beside the target under a fresh random name
/// (not the process id, which anyone could guess and plant a link at), as
/// a regular file: two runs use two names.
#[test]
fn temporary_files_have_unpredictable_names_beside_the_target() {
    if !cfg!(debug_assertions) {
        eprintln!("skipped: the pause hook needs a debug build");
        return;
    }
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    let output = dir.path().join("plan.csv");
    let mut names = Vec::new();
    for _ in 0..2 {
        let child = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
            .args(["solve", "-q", "-o"])
            .arg(&output)
            .arg(&input)
            .env("MEMPLAN_TEST_PAUSE_BEFORE_RENAME", "1000")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let waited = Instant::now();
        while leftovers(dir.path()).is_empty() && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let found = leftovers(dir.path());
        assert_eq!(found.len(), 1, "{found:?}");
        let name = found[0].clone();
        assert!(name.starts_with(".plan.csv."), "{name}");
        assert!(!name.contains(&child.id().to_string()), "{name}");
        let meta = std::fs::symlink_metadata(dir.path().join(&name)).unwrap();
        assert!(meta.file_type().is_file(), "{name}");
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(leftovers(dir.path()), Vec::<String>::new());
        let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
        validate(&problem, &read_plan(&output, &problem).unwrap()).unwrap();
        names.push(name);
    }
    assert_ne!(names[0], names[1]);
}

/// A FIFO named by `-o` is written in place (no temporary file, no
/// rename over it): the reader at its other end gets the whole plan.
#[test]
fn a_fifo_output_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "two.csv", TWO_BUFFERS);
    let fifo = dir.path().join("plan.fifo");
    match Process::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {}
        _ => {
            eprintln!("skipped: no mkfifo on this system");
            return;
        }
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    memplan()
        .args(["solve", "-q", "-o"])
        .arg(&fifo)
        .arg(&input)
        .assert()
        .success();
    let text = reader.join().unwrap();
    let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
    let plan = memplan::plan::read_plan_from(&text, &fifo, &problem).unwrap();
    validate(&problem, &plan).unwrap();
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(meta.file_type().is_fifo());
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// `generate` and `plot` write through a symlink to its target (keeping
/// the link) and to `/dev/stdout` in place, as `solve` does.
#[test]
fn generate_and_plot_write_through_links_and_to_standard_output() {
    let dir = TempDir::new().unwrap();
    let target = file(&dir, "target.csv", "old\n");
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink("target.csv", &link).unwrap();
    let generate = || {
        let mut cmd = memplan();
        cmd.args([
            "generate",
            "--kind",
            "layered",
            "--buffers",
            "50",
            "--seed",
            "4",
        ]);
        cmd
    };
    generate().arg("-o").arg(&link).assert().success();
    assert!(is_symlink(&link));
    let problem = read_problem(&target, Lifetimes::HalfOpen).unwrap();
    assert_eq!(problem.len(), 50);
    let piped = ok_stdout(generate().args(["-o", "/dev/stdout"]));
    assert_eq!(piped, std::fs::read(&target).unwrap());

    let plan = dir.path().join("plan.csv");
    solve_greedy(&target, &plan);
    let drawing = file(&dir, "drawing.svg", "old\n");
    let drawing_link = dir.path().join("drawing-link.svg");
    std::os::unix::fs::symlink("drawing.svg", &drawing_link).unwrap();
    memplan()
        .arg("plot")
        .arg(&target)
        .arg(&plan)
        .arg("-o")
        .arg(&drawing_link)
        .assert()
        .success();
    assert!(is_symlink(&drawing_link));
    assert!(read(&drawing).contains("<svg"), "{}", read(&drawing));
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
}

/// Plans `input` into `output` with greedy, quietly; it must succeed.
fn solve_greedy(input: &Path, output: &Path) {
    memplan()
        .args(["solve", "--solver", "greedy", "-q", "-o"])
        .arg(output)
        .arg(input)
        .assert()
        .success();
}

/// Fault injection: a solve killed (SIGKILL) at random moments, writing
/// a large plan over an existing file, leaves that file either as it was
/// or as a complete, valid plan; never partial.
#[test]
fn killed_writes_never_leave_a_partial_plan() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("big.csv");
    generate("layered", 200000, None, &input);
    let problem = read_problem(&input, Lifetimes::HalfOpen).unwrap();
    let output = dir.path().join("plan.csv");
    // How long a whole run takes, to spread the kills over it.
    let started = Instant::now();
    solve_greedy(&input, &output);
    let whole = started.elapsed();
    // Random moments, one in each twelfth of 0.1 to 1.3 runs (so that
    // some land before the rename and some after); the seed is printed.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    eprintln!("kill moments seed {seed}");
    let mut state = seed;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    // Kills the solve after `delay`: whether the file was left as it
    // was (else it must hold a complete, valid plan).
    let kill_after = |delay: Duration| -> bool {
        std::fs::write(&output, "old\n").unwrap();
        let mut child = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
            .args(["solve", "--solver", "greedy", "-q", "-o"])
            .arg(&output)
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let text = std::fs::read(&output).unwrap();
        if text == b"old\n" {
            return true;
        }
        let plan = memplan::plan::read_plan_from(&text, &output, &problem)
            .expect("a partial plan was left behind");
        validate(&problem, &plan).unwrap();
        false
    };
    // Kills that left the new plan, and the old file.
    let mut seen = [0u32; 2];
    for i in 0..12u32 {
        let delay = whole.mul_f64(0.1 + (f64::from(i) + uniform()) / 10.0);
        seen[usize::from(kill_after(delay))] += 1;
    }
    // On a loaded machine the killed runs can be far slower (or faster)
    // than the timed one: later (earlier) kills until one lands after
    // (before) the rename, so that both sides are always exercised.
    // (side, first factor of the run's time, ratio, at most this many):
    // up to 1.3 × 1.5^11 ≈ 112 runs later, down to 0.1 / 4^5 ≈ 1e-4.
    for (side, mut factor, ratio, tries) in [(0, 1.3, 1.5, 11), (1, 0.1, 0.25, 5)] {
        for _ in 0..tries {
            if seen[side] > 0 {
                break;
            }
            factor *= ratio;
            seen[usize::from(kill_after(whole.mul_f64(factor)))] += 1;
        }
    }
    // The kills landed both before and after the rename.
    let [new, old] = seen;
    assert!(old > 0 && new > 0, "old {old}, new {new}");
}

/// A signal during `bench` removes the directory of the instances it
/// generated, and exits 130 even when standard error is a closed pipe
/// (the handler printing "interrupted" must not die there).
#[test]
fn a_signal_during_bench_removes_its_temporary_directory() {
    for close_stderr in [false, true] {
        let tmp = TempDir::new().unwrap();
        let benches = || -> Vec<String> {
            std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("memplan-bench-"))
                .collect()
        };
        let mut child = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
            .args(["bench", "--kind", "random", "--sizes", "2000000,2000000"])
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if close_stderr {
            drop(child.stderr.take());
        }
        let waited = Instant::now();
        while benches().is_empty() && waited.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(benches().len(), 1, "no temporary directory appeared");
        signal(&child, "INT");
        let waited = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if waited.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("still running 20 s after the signal (stderr closed: {close_stderr})");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status.code(), Some(130), "stderr closed: {close_stderr}");
        assert_eq!(benches(), Vec::<String>::new());
    }
}

/// Writing to a full standard output is an error (exit 2, a message on
/// stderr), never a panic, whatever the command.
#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full on this system");
        return;
    };
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "in.csv", "id,lower,upper,size\na,0,4,8\nb,2,6,8\n");
    let plan = file(&dir, "plan.csv", "id,offset\na,0\nb,8\n");
    let noid = file(&dir, "noid.csv", "offset\n0\n");
    let runs: [&[&OsStr]; 5] = [
        &["stats".as_ref(), input.as_ref()],
        &["validate".as_ref(), input.as_ref(), plan.as_ref()],
        &[
            "validate".as_ref(),
            "--json".as_ref(),
            input.as_ref(),
            noid.as_ref(),
        ],
        &["solve".as_ref(), input.as_ref()],
        &["bench".as_ref(), "--sizes".as_ref(), "100".as_ref()],
    ];
    for args in runs {
        let out = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.starts_with("memplan: "), "{args:?}: {stderr}");
    }
}

/// A signal racing with the end of a run: the process either exits 130
/// saying "interrupted", or ends as it would have without the signal
/// (status 0, nothing about an interruption), never a mix of the two.
#[test]
fn a_signal_at_the_end_never_mixes_interrupted_with_success() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("small.csv");
    generate("layered", 20000, None, &input);
    // How long a run takes, to spread the signals around its end.
    let started = Instant::now();
    memplan().arg("stats").arg(&input).assert().success();
    let whole = started.elapsed();
    let (mut interrupted, mut finished) = (0, 0);
    for i in 0..40u32 {
        let child = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
            .arg("stats")
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(whole * (i % 20 + 5) / 20);
        signal(&child, "INT");
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr).contains("interrupted");
        match out.status.code() {
            Some(130) => {
                assert!(said, "exit 130 without a word");
                interrupted += 1;
            }
            Some(0) => {
                assert!(!said, "exit 0 after printing 'interrupted'");
                finished += 1;
            }
            // Killed before the handler was installed.
            None => {}
            Some(code) => panic!("exit {code}: {out:?}"),
        }
    }
    eprintln!("{interrupted} interrupted, {finished} finished");
    // Most runs got as far as the handler: the checks above ran.
    assert!(interrupted + finished >= 20, "{interrupted} + {finished}");
}

/// SIGTERM sent to memplan alone (not its process group) during `bench`
/// also ends the `sort` it runs: a stand-in `sort` that records its
/// process id and sleeps must be gone after memplan exits.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_during_bench_ends_its_sort() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let pid_file = dir.path().join("sort.pid");
    let sort = bin.join("sort");
    std::fs::write(
        &sort,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 60\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&sort, std::fs::Permissions::from_mode(0o755)).unwrap();
    let input = file(&dir, "in.csv", "id,lower,upper,size\na,0,4,8\nb,2,6,8\n");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("memplan"))
        .arg("bench")
        .arg(&input)
        .env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let waited = Instant::now();
    let pid = loop {
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if let Ok(pid) = text.trim().parse::<u32>() {
            break pid;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "sort never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    // `exec` keeps the id; wait until `sleep` has replaced the shell.
    let comm = format!("/proc/{pid}/comm");
    while std::fs::read_to_string(&comm).unwrap_or_default().trim() != "sleep" {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "sort never slept"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&child, "TERM");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The stand-in is memplan's child, now orphaned: once ended, it is
    // reaped by the system (or lingers as a zombie, state Z).
    let ended = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true)
    };
    let waited = Instant::now();
    while !ended() {
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "the sort child {pid} still runs after memplan ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
