//! `memplan plot`: a picture of a plan, as SVG or PNG (by the output's
//! extension). Buffers are rectangles in time × address; the load profile
//! (bytes alive over time, whose peak is the max load), a dashed max-load
//! line and the makespan line sit on top; axes are in logical time and in
//! human byte units.
//!
//! Up to [`DETAIL_LIMIT`] buffers every buffer is drawn. Beyond, occupancy
//! is rasterised into cells of a few pixels (the exact share of each cell
//! that buffers cover), shaded in a few levels and merged into runs, so the
//! file size depends on the picture's size, not on the number of buffers.
//!
//! Drawing uses plotters with its pure-Rust backends; text is laid out (and
//! rasterised in PNG) with DejaVu Sans, embedded from the `dejavu` crate,
//! so nothing is read from the system.

use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::Path;

use memplan::plan::read_plan;
use memplan::{validate, Plan, Problem};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::args::{PlotArgs, PlotFormat};
use crate::glyphs::GlyphText;
use crate::output::{bytes, Sink};
use crate::Failure;

mod coverage;
mod figure;
mod labels;

use figure::Figure;

/// Above this many buffers, occupancy is aggregated into cells.
pub const DETAIL_LIMIT: usize = 5000;
/// At most this many cell rectangles in an SVG (about 1.8 MB).
const SVG_MAX_RECTANGLES: usize = 20_000;
/// Shades of aggregated cells (by the share of the cell in use).
const LEVELS: usize = 4;
const FONT: &str = "sans-serif";

/// Which file is written: `--format`, else from the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
}

impl Format {
    /// `given`, or the format of `path`'s extension; refused when they
    /// disagree (an SVG in `plot.png`) or when neither says.
    fn of(path: &Path, given: Option<PlotFormat>) -> Result<Format, Failure> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let named = match ext.as_deref() {
            Some("svg") => Some(Format::Svg),
            Some("png") => Some(Format::Png),
            _ => None,
        };
        let given = given.map(|f| match f {
            PlotFormat::Svg => Format::Svg,
            PlotFormat::Png => Format::Png,
        });
        let shown = if path == Path::new("-") {
            "standard output".into()
        } else {
            path.display().to_string()
        };
        match (given, named) {
            (Some(g), Some(n)) if g != n => Err(Failure::Input(format!(
                "{shown}: --format {} does not match the file's extension",
                g.name()
            ))),
            (Some(format), _) | (None, Some(format)) => Ok(format),
            (None, None) => Err(Failure::Input(format!(
                "{shown}: the plot file must end in .svg or .png, or --format must say which"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }

    /// How aggregated cells are drawn: SVG pays per element, so its cells
    /// start at 3 pixels and grow until at most [`SVG_MAX_RECTANGLES`]
    /// rectangles remain (about 90 bytes each); PNG draws every pixel.
    fn raster(self) -> Raster {
        match self {
            Format::Svg => Raster {
                cell: 3,
                max_rectangles: Some(SVG_MAX_RECTANGLES),
            },
            Format::Png => Raster {
                cell: 1,
                max_rectangles: None,
            },
        }
    }
}

/// Cell size and rectangle budget of the aggregated view.
#[derive(Clone, Copy, Debug)]
struct Raster {
    /// Side of a cell in pixels, at first.
    cell: i32,
    /// Cells grow until at most this many rectangles remain.
    max_rectangles: Option<usize>,
}

/// Runs `memplan plot`.
pub fn run(args: PlotArgs) -> Result<(), Failure> {
    let format = Format::of(&args.output, args.format)?;
    let mut inputs = vec![args.input.input.as_path(), args.plan.as_path()];
    if let Some(pools) = &args.pools {
        inputs.push(pools);
    }
    let sink = Sink::new(&args.output, &inputs)?;
    if format == Format::Png && sink.is_stdout() && std::io::stdout().is_terminal() {
        return Err(Failure::Input(
            "standard output is a terminal: a PNG would garble it (redirect it to a file or a pipe)"
                .into(),
        ));
    }
    let name = args
        .input
        .input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // One panel per pool, or one for the single memory.
    let panels: Vec<Panel> = match &args.pools {
        None => {
            let problem = memplan::problem::read_problem(&args.input.input, args.input.lifetimes)?;
            let plan = read_plan(&args.plan, &problem)?;
            validate(&problem, &plan).map_err(|e| {
                Failure::Negative(format!("{}: invalid plan: {e}", args.plan.display()))
            })?;
            vec![(problem, plan, name, None)]
        }
        Some(pools) => pool_panels(&args, pools, &name)?,
    };
    let mut figures: Vec<Figure> = panels
        .iter()
        .map(|(problem, plan, name, capacity)| Figure::new(problem, plan, name.clone(), *capacity))
        .collect();
    // Pools share one time axis (empty pools do not widen it).
    let spans: Vec<Range<f64>> = figures
        .iter()
        .filter(|f| !f.problem.is_empty())
        .map(|f| f.time.clone())
        .collect();
    if let (Some(first), Some(last)) = (
        spans.iter().map(|t| t.start).reduce(f64::min),
        spans.iter().map(|t| t.end).reduce(f64::max),
    ) {
        for figure in &mut figures {
            figure.time = first..last;
        }
    }
    let height = if args.pools.is_some() {
        args.height.max(320 * figures.len() as u32).min(10_000)
    } else {
        args.height
    };
    let size = (args.width, height);
    let internal = |e: String| Failure::Internal(format!("cannot draw the plot: {e}"));
    register_fonts().map_err(internal)?;
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                draw_all(&figures, &root, format.raster()).map_err(internal)?;
                root.present().map_err(|e| internal(e.to_string()))?;
            }
            sink.write(|out| out.write_all(svg.as_bytes()))
        }
        Format::Png => {
            let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let backend = BitMapBackend::with_buffer(&mut pixels, size);
                let root = GlyphText::new(backend)
                    .map_err(internal)?
                    .into_drawing_area();
                draw_all(&figures, &root, format.raster()).map_err(internal)?;
                root.present().map_err(|e| internal(e.to_string()))?;
            }
            sink.write(|out| write_png(out, size, &pixels))
        }
    }
}

/// One panel: the buffers, their plan, the title and a capacity line.
type Panel = (Problem, Plan, String, Option<u64>);

/// The panels of a pooled plan: each pool's buffers and offsets (read
/// and checked as `validate --pools` does), named after the pool.
fn pool_panels(args: &PlotArgs, pools: &Path, name: &str) -> Result<Vec<Panel>, Failure> {
    let pools = memplan::pools::read_pools(pools)?;
    let problem =
        memplan::pools::read_pool_problem(&args.input.input, args.input.lifetimes, &pools)?;
    let invalid =
        |e: String| Failure::Negative(format!("{}: invalid plan: {e}", args.plan.display()));
    let plan = match memplan::pools::read_pool_plan(&args.plan, &problem) {
        Ok(plan) => plan,
        Err(e) if e.is_plan_mismatch() => return Err(invalid(e.kind.to_string())),
        Err(e) => return Err(e.into()),
    };
    memplan::pools::validate_pools(&problem, &plan).map_err(|e| invalid(e.to_string()))?;
    problem
        .pool_indices()
        .map(|p| {
            let (members, offsets) = plan.pool_plan(p);
            let sub = problem
                .sub_problem(p, &members)
                .map_err(|e| Failure::Internal(format!("pool `{}`: {e}", problem.pool(p).name)))?;
            let pool = problem.pool(p);
            let title = format!(
                "{name} · pool {} (capacity {})",
                pool.name,
                bytes(pool.capacity)
            );
            Ok((sub, offsets, title, Some(pool.capacity)))
        })
        .collect()
}

/// Draws `figures` one above the other.
fn draw_all<DB: DrawingBackend>(
    figures: &[Figure],
    root: &DrawingArea<DB, Shift>,
    raster: Raster,
) -> Result<(), String> {
    if let [figure] = figures {
        return figure.draw(root, raster);
    }
    let panels = root.split_evenly((figures.len(), 1));
    for (figure, panel) in figures.iter().zip(&panels) {
        figure.draw(panel, raster)?;
    }
    Ok(())
}

/// Registers the embedded DejaVu Sans under the family plotters asks for.
fn register_fonts() -> Result<(), String> {
    let failed = |_| "the embedded font is unreadable".to_string();
    register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).map_err(failed)?;
    register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).map_err(failed)
}

fn write_png(out: &mut dyn Write, (w, h): (u32, u32), rgb: &[u8]) -> std::io::Result<()> {
    let mut encoder = png::Encoder::new(out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let io = |e: png::EncodingError| std::io::Error::other(e.to_string());
    let mut writer = encoder.write_header().map_err(io)?;
    writer.write_image_data(rgb).map_err(io)?;
    writer.finish().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::coverage::*;
    use super::labels::*;

    #[test]
    fn ticks_are_round_in_binary_units() {
        let (ticks, unit) = byte_ticks(3.2 * 1024.0 * 1024.0);
        assert_eq!(unit, 1 << 20);
        let labels: Vec<String> = ticks.iter().map(|&v| byte_label(v as f64, unit)).collect();
        assert_eq!(
            labels,
            ["0", "0.5 MiB", "1 MiB", "1.5 MiB", "2 MiB", "2.5 MiB", "3 MiB"]
        );
        let (ticks, unit) = byte_ticks(45.0);
        assert_eq!(unit, 1);
        assert_eq!(ticks, [0, 5, 10, 15, 20, 25, 30, 35, 40, 45]);
        let (ticks, _) = byte_ticks(1.06);
        assert_eq!(ticks, [0, 1]);
        assert_eq!(count_label(1_500_000.0), "1.5M");
        assert_eq!(count_label(12_000.0), "12k");
        assert_eq!(count_label(950.0), "950");
        assert_eq!(group_digits(1_000_000), "1,000,000");
        assert_eq!(group_digits(400), "400");
    }

    #[test]
    fn pieces_split_partial_and_full_cells() {
        assert_eq!(pieces(0.5, 0.75, 4), [Some((0, 1, 0.25)), None, None]);
        assert_eq!(
            pieces(0.5, 3.25, 4),
            [Some((0, 1, 0.5)), Some((1, 3, 1.0)), Some((3, 4, 0.25))]
        );
        assert_eq!(pieces(1.0, 2.0, 4), [Some((1, 2, 1.0)), None, None]);
        assert_eq!(pieces(3.0, 9.0, 4), [Some((3, 4, 1.0)), None, None]);
        assert_eq!(pieces(2.0, 2.0, 4), [None, None, None]);
    }

    #[test]
    fn runs_merge_rows_and_columns() {
        // Two rows of `1 1 0 2`: one 2x2 rectangle of level 1, one 1x2 of 2.
        let levels = [1, 1, 0, 2, 1, 1, 0, 2];
        let mut runs = merged_runs(&levels, 4, 2);
        runs.sort_by_key(|r| r.x0);
        assert_eq!(
            runs,
            [
                Run {
                    x0: 0,
                    x1: 2,
                    y0: 0,
                    y1: 2,
                    level: 1
                },
                Run {
                    x0: 3,
                    x1: 4,
                    y0: 0,
                    y1: 2,
                    level: 2
                },
            ]
        );
        // A change of level splits the rectangle.
        let levels = [1, 1, 1, 2];
        assert_eq!(merged_runs(&levels, 2, 2).len(), 3);
    }
}
