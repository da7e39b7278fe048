//! Links `cargo test` binaries to libpython with an rpath, so that they run
//! without `LD_LIBRARY_PATH`; maturin's extension-module builds link no
//! libpython at all.

fn main() {
    pyo3_build_config::add_libpython_rpath_link_args();
}
