//! The library's import graph, read from its sources: shared by the layer
//! test (`tests/layers.rs`) and the `module_graph` example, which prints it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; a module sees only those before its own.
/// Within `solvers`, the same rule holds between solvers.
pub const LAYERS: &[&[&str]] = &[
    &["buffer", "quote", "dispose", "stop"],
    &["named"],
    &["geometry"],
    &["problem"],
    &["plan"],
    &["hints"],
    &["solver"],
    &["solvers::greedy"],
    &["solvers::anytime"],
    &["solvers::search", "solvers::tela", "solvers::boxing"],
    &["solvers::auto"],
    &["pools", "stable"],
    &["generate", "transform"],
    &["request"],
];

/// The unit a file belongs to: `solvers::X` for solvers, else the top
/// module (`lib.rs`, `solvers/mod.rs` and `testutil.rs` are not ranked).
pub fn unit(module: &[String]) -> Option<String> {
    match module {
        [top, sub, ..] if top == "solvers" => Some(format!("solvers::{sub}")),
        // `solvers/mod.rs` only declares the solvers.
        [top] if top == "solvers" => None,
        [top, ..] if top != "lib" && top != "testutil" => Some(top.clone()),
        _ => None,
    }
}

pub fn layer(unit: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&unit))
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/solvers/greedy/mod.rs` → `["solvers", "greedy"]`.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// `text` with its comments removed and the contents of its string and
/// character literals emptied (`"{"` becomes `""`), its line breaks kept:
/// code alone, whose brackets match.
pub fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let ident = |k: usize| chars[k].is_alphanumeric() || chars[k] == '_';
    let mut out = String::with_capacity(text.len());
    // The line breaks of a span left out.
    let breaks = |span: &[char], out: &mut String| {
        out.extend(span.iter().filter(|&&c| c == '\n'));
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // `r"…"`, `r#"…"#`, `br"…"`: a raw string, with `hashes` `#`s.
        let raw = (c == 'r'
            && (i == 0 || !ident(i - 1) || (chars[i - 1] == 'b' && (i == 1 || !ident(i - 2)))))
        .then(|| {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            (chars.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
        })
        .flatten();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let (from, mut depth) = (i, 0);
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            breaks(&chars[from..i.min(chars.len())], &mut out);
        } else if let Some(hashes) = raw {
            let from = i;
            i += 2 + hashes;
            while i < chars.len()
                && !(chars[i] == '"'
                    && chars[i + 1..].iter().take_while(|&&h| h == '#').count() >= hashes)
            {
                i += 1;
            }
            i = (i + 1 + hashes).min(chars.len());
            out.push_str("\"\"");
            breaks(&chars[from..i], &mut out);
        } else if c == '"' {
            let from = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            out.push_str("\"\"");
            breaks(&chars[from..i], &mut out);
        } else if c == '\'' && next == Some('\\') {
            // An escaped character: `'\n'`, `'\''`, `'\u{7b}'`.
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("''");
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("''");
        } else {
            // Code, or a lifetime (`'a`).
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The length of the item at the start of `code` (what follows an
/// attribute): up to its `;`, or its `,` (a field, an argument, an arm),
/// or the `}` that closes its first block; or up to the end of the block
/// around it, if that comes first.
fn item_len(code: &str) -> usize {
    // Depth in brackets, and in `<…>` outside them (generics).
    let (mut depth, mut angles) = (0usize, 0usize);
    let mut prev = ' ';
    for (i, c) in code.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 && c == '}' {
                    return i + 1;
                }
            }
            '<' if depth == 0 => angles += 1,
            '>' if depth == 0 && prev != '-' && prev != '=' => angles = angles.saturating_sub(1),
            ';' if depth == 0 => return i + 1,
            ',' if depth == 0 && angles == 0 => return i + 1,
            _ => {}
        }
        prev = c;
    }
    code.len()
}

/// `code` (see [`code_of`]) without what `#[cfg(test)]` attributes govern:
/// each such item is left out (a block with its braces matched, or an
/// item up to its `;`), and the rest is kept, line breaks included.
pub fn production(code: &str) -> String {
    const TEST: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(TEST) {
        out.push_str(&rest[..at]);
        let item = &rest[at + TEST.len()..];
        let len = item_len(item);
        out.extend(item[..len].chars().filter(|&c| c == '\n'));
        rest = &item[len..];
    }
    out.push_str(rest);
    out
}

/// The `crate::a::b` and `super::a` paths that the non-test code of
/// `module` names, as module paths (as far as they name modules that
/// exist). Not counted: comments, literals, the items under
/// `#[cfg(test)]` ([`production`]) and `tests.rs` files.
pub fn imports(
    text: &str,
    module: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    // A `tests.rs` file is test code from its first line.
    if module.last().is_some_and(|m| m == "tests") {
        return found;
    }
    let code = production(&code_of(text));
    for line in code.lines() {
        let mut rest = line;
        while let Some((at, prefix)) = ["crate::", "super::"]
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, *p)))
            .min()
        {
            rest = &rest[at + prefix.len()..];
            // `super` in `a/b.rs` (module a::b) is `a`.
            let base: Vec<String> = if prefix == "super::" {
                module[..module.len().saturating_sub(1)].to_vec()
            } else {
                Vec::new()
            };
            let tail: Vec<String> = rest
                .split("::")
                .map(|p| {
                    p.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .take_while(|p| !p.is_empty())
                .collect();
            let path: Vec<String> = base.into_iter().chain(tail).collect();
            // The longest prefix that is a module.
            if let Some(n) = (1..=path.len())
                .rev()
                .find(|&n| modules.contains(&path[..n]))
            {
                found.insert(path[..n].to_vec());
            }
        }
    }
    found
}

/// The import graph of the library's files, and the imports that go up or
/// across the layers.
#[allow(clippy::type_complexity)]
pub fn import_graph() -> (BTreeMap<Vec<String>, BTreeSet<Vec<String>>>, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let mut upward = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let used = imports(&text, &module, &modules);
        if let Some(from) = unit(&module) {
            let from_layer = layer(&from).unwrap_or_else(|| panic!("{from}: not in LAYERS"));
            for target in &used {
                let Some(to) = unit(target) else { continue };
                let to_layer = layer(&to).unwrap_or_else(|| panic!("{to}: not in LAYERS"));
                if to != from && to_layer >= from_layer {
                    upward.push(format!("{} -> {}", module.join("::"), target.join("::")));
                }
            }
        }
        graph.insert(module, used);
    }
    (graph, upward)
}
