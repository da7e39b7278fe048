//! The committed header `include/memplan.h` is what cbindgen generates from
//! this crate. `MEMPLAN_BLESS=1 cargo test -p memplan-capi header` rewrites
//! it; without it the test fails on any difference, so CI catches a header
//! left behind by a change to the API.

use std::path::Path;

/// cbindgen's output for this crate with `cbindgen.toml` (it follows the
/// `mod` items of `lib.rs`).
fn generate() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("UTF-8 header")
}

#[test]
fn committed_header_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/memplan.h");
    let fresh = generate();
    if std::env::var_os("MEMPLAN_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &fresh).expect("write include/memplan.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{} differs from cbindgen's output: regenerate it with \
         `MEMPLAN_BLESS=1 cargo test -p memplan-capi header` and commit it",
        path.display()
    );
}

/// Every type, constant and function of the header comes with its
/// documentation comment.
#[test]
fn every_declaration_is_documented() {
    let header = generate();
    let lines: Vec<&str> = header.lines().collect();
    let mut declarations = 0;
    for (i, line) in lines.iter().enumerate() {
        let declares = line.starts_with("memplan_status memplan_")
            || line.starts_with("typedef ")
            || (line.starts_with("#define MEMPLAN_") && !line.starts_with("#define MEMPLAN_H"));
        if declares {
            declarations += 1;
            assert_eq!(lines[i - 1], " */", "undocumented: {line}");
        }
    }
    // 56 functions; 6 opaque types and 3 integer types; 11 status codes,
    // 3 lifetime conventions, 3 stop reasons and the name capacity.
    assert_eq!(declarations, 56 + 9 + 18);
}
