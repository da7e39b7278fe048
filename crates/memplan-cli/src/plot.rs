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

use std::io::Write;
use std::ops::Range;
use std::path::Path;

use memplan::geometry::sweep::LoadProfile;
use memplan::plan::read_plan;
use memplan::BufferIdx;
use memplan::{validate, Plan, Problem, Stats};
use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::types::RangedCoordu64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::args::PlotArgs;
use crate::glyphs::GlyphText;
use crate::output::{bytes, Sink};
use crate::Failure;

/// Above this many buffers, occupancy is aggregated into cells.
pub const DETAIL_LIMIT: usize = 5000;
/// At most this many cell rectangles in an SVG (about 1.8 MB).
const SVG_MAX_RECTANGLES: usize = 20_000;
/// Shades of aggregated cells (by the share of the cell in use).
const LEVELS: usize = 4;
const FONT: &str = "sans-serif";

/// Which file is written, from the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
}

impl Format {
    fn of(path: &Path) -> Result<Format, Failure> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(Failure::Input(format!(
                "{}: the plot file must end in .svg or .png",
                path.display()
            ))),
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
    let format = Format::of(&args.output)?;
    let mut inputs = vec![args.input.input.as_path(), args.plan.as_path()];
    if let Some(pools) = &args.pools {
        inputs.push(pools);
    }
    let sink = Sink::new(&args.output, &inputs)?;
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

/// What is drawn: the problem, its (valid) plan and their statistics.
struct Figure<'a> {
    problem: &'a Problem,
    plan: &'a Plan,
    name: String,
    stats: Stats,
    profile: LoadProfile,
    /// Time axis: first start to last end (half-open time).
    time: Range<f64>,
    /// Address axis: 0 to a little above the makespan (and the capacity).
    top: f64,
    /// A pool's capacity, drawn as a dashed line.
    capacity: Option<u64>,
}

const BUFFER_COLORS: [RGBColor; 8] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
];
const FIXED_COLOR: RGBColor = RGBColor(0x79, 0x79, 0x79);
const LOAD_COLOR: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const MAKESPAN_COLOR: RGBColor = RGBColor(0x20, 0x20, 0x20);
/// Aggregated cells, from barely used to full.
const LIGHT: (f64, f64, f64) = (0xc6 as f64, 0xdb as f64, 0xef as f64);
const DARK: (f64, f64, f64) = (0x08 as f64, 0x45 as f64, 0x94 as f64);

impl<'a> Figure<'a> {
    fn new(problem: &'a Problem, plan: &'a Plan, name: String, capacity: Option<u64>) -> Self {
        let stats = Stats::new(problem, plan);
        let profile = problem.load_profile();
        let b = problem.buffers();
        let first = b.iter().map(|b| b.start).min().unwrap_or(0) as f64;
        let last = b.iter().map(|b| b.end).max().unwrap_or(1) as f64;
        let last = if last > first { last } else { first + 1.0 };
        // Whole units: the chart's axis and the pixel mapping agree.
        let top = ((stats
            .makespan
            .max(stats.max_load)
            .max(capacity.unwrap_or(0))
            .max(1) as f64)
            * 1.06)
            .ceil();
        Figure {
            problem,
            plan,
            name,
            stats,
            profile,
            time: first..last,
            top,
            capacity,
        }
    }

    /// The whole picture: header, axes, buffers (or aggregated cells),
    /// the load profile and the makespan, max load and capacity lines.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        raster: Raster,
    ) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(err)?;
        let (header, body) = root.split_vertically(64);
        self.draw_header(&header).map_err(err)?;
        let mut chart = self.chart(&body).map_err(err)?;
        let area = chart.plotting_area();
        let (xs, ys) = area.get_pixel_range();
        let screen = area.use_screen_coord();
        let pixels = Pixels {
            time: self.time.clone(),
            top: self.top,
            x: xs.start as f64..xs.end as f64,
            y: ys.start as f64..ys.end as f64,
            origin: (xs.start, ys.start),
        };
        if self.problem.len() <= DETAIL_LIMIT {
            self.draw_buffers(&screen, &pixels).map_err(err)?;
        } else {
            self.draw_cells(&screen, &pixels, raster).map_err(err)?;
        }
        let columns = (xs.end - xs.start).max(1) as usize;
        self.draw_levels(&mut chart, columns).map_err(err)
    }

    /// The axes (time; addresses in human units) and their light mesh.
    fn chart<'b, DB: DrawingBackend>(
        &self,
        body: &'b DrawingArea<DB, Shift>,
    ) -> Result<Chart<'b, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
        let (ticks, unit) = byte_ticks(self.top);
        let y_label = |v: &u64| byte_label(*v as f64, unit);
        let x_label = |v: &u64| count_label(*v as f64);
        let mut chart = ChartBuilder::on(body)
            .margin_left(10)
            .margin_right(24)
            .margin_bottom(8)
            .x_label_area_size(44)
            .y_label_area_size(86)
            .build_cartesian_2d(
                (self.time.start as u64)..(self.time.end as u64),
                (0..self.top.ceil() as u64).with_key_points(ticks),
            )?;
        chart
            .configure_mesh()
            .x_labels(10)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc("time")
            .y_desc("address")
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.08))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .draw()?;
        Ok(chart)
    }

    /// The load profile as steps (at most a few points per pixel of
    /// `columns`), the max load dashed, the makespan and the capacity.
    fn draw_levels<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        columns: usize,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let steps = load_steps(&self.profile, &self.time, columns);
        let (t0, t1) = (self.time.start as u64, self.time.end as u64);
        chart.draw_series(LineSeries::new(steps, LOAD_COLOR.stroke_width(2)))?;
        let max_load = self.stats.max_load;
        chart.draw_series(DashedLineSeries::new(
            [(t0, max_load), (t1, max_load)],
            8,
            5,
            LOAD_COLOR.stroke_width(1),
        ))?;
        let makespan = self.stats.makespan;
        chart.draw_series(LineSeries::new(
            [(t0, makespan), (t1, makespan)],
            MAKESPAN_COLOR.stroke_width(2),
        ))?;
        if let Some(capacity) = self.capacity {
            chart.draw_series(DashedLineSeries::new(
                [(t0, capacity), (t1, capacity)],
                4,
                4,
                MAKESPAN_COLOR.stroke_width(1),
            ))?;
        }
        Ok(())
    }

    /// Title (file name), statistics and legend.
    fn draw_header<DB: DrawingBackend>(
        &self,
        header: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let title = TextStyle::from((FONT, 20, FontStyle::Bold).into_font()).color(&BLACK);
        let text = TextStyle::from((FONT, 15)).color(&BLACK);
        header.draw_text(&self.stats_line(), &text, (14, 36))?;

        // Legend, right-aligned on the title's line.
        let legend = TextStyle::from((FONT, 14)).color(&BLACK);
        let entries = self.legend_entries();
        let (width, _) = header.dim_in_pixel();
        let mut widths = Vec::with_capacity(entries.len());
        for (label, _) in &entries {
            widths.push(header.estimate_text_size(label, &legend)?.0 as i32);
        }
        let total: i32 = widths.iter().map(|w| w + 22 + 18).sum();
        let mut x = width as i32 - 24 - total;
        let y = 12;
        // The title (the file name), shortened to end before the legend.
        let room = (x - 14 - 24).max(0) as u32;
        let name = shortened(header, &self.name, &title, room)?;
        header.draw_text(&name, &title, (14, 8))?;
        for ((label, swatch), w) in entries.iter().zip(widths) {
            draw_swatch(header, *swatch, (x, y))?;
            header.draw_text(label, &legend, (x + 22, y - 1))?;
            x += 22 + w + 18;
        }
        Ok(())
    }

    /// The header's line of statistics.
    fn stats_line(&self) -> String {
        let s = &self.stats;
        let detail = if self.problem.len() > DETAIL_LIMIT {
            ", aggregated"
        } else {
            ""
        };
        format!(
            "{} buffers{detail} · makespan {} · max load {} · fragmentation {} ({:.2}%)",
            group_digits(s.buffers as u64),
            bytes(s.makespan),
            bytes(s.max_load),
            bytes(s.fragmentation),
            s.fragmentation_percent
        )
    }

    /// The legend's entries: buffers (or shades), fixed buffers if drawn,
    /// load, max load, makespan and the capacity if any.
    fn legend_entries(&self) -> Vec<(&'static str, Swatch)> {
        let buffers = if self.problem.len() > DETAIL_LIMIT {
            ("buffers (darker: fuller cells)", Swatch::Shades)
        } else {
            ("buffers", Swatch::Box(BUFFER_COLORS[0]))
        };
        let mut entries: Vec<(&str, Swatch)> = vec![buffers];
        let fixed = self.problem.len() <= DETAIL_LIMIT
            && self
                .problem
                .buffers()
                .iter()
                .any(|b| b.fixed_offset.is_some());
        if fixed {
            entries.push(("fixed", Swatch::Box(FIXED_COLOR)));
        }
        entries.extend([
            ("load", Swatch::Line(LOAD_COLOR, false)),
            ("max load", Swatch::Line(LOAD_COLOR, true)),
            ("makespan", Swatch::Line(MAKESPAN_COLOR, false)),
        ]);
        if self.capacity.is_some() {
            entries.push(("capacity", Swatch::Line(MAKESPAN_COLOR, true)));
        }
        entries
    }

    /// Every buffer as a rectangle, at least one pixel wide and high. A
    /// buffer with gaps is first drawn hollow over its whole lifetime (an
    /// outline and a light fill, below every buffer), then its occupied
    /// pieces filled like other buffers.
    fn draw_buffers<DB: DrawingBackend>(
        &self,
        screen: &DrawingArea<DB, Shift>,
        px: &Pixels,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let problem = self.problem;
        let color = |i: BufferIdx| {
            if problem.buffer(i).fixed_offset.is_some() {
                FIXED_COLOR
            } else {
                BUFFER_COLORS[spread(i.index()) % BUFFER_COLORS.len()]
            }
        };
        // [x0, x1) × [y0, y1) in pixels (y downwards), at least 1 × 1.
        let rect = |start: u64, end: u64, lo: u64, hi: u64| {
            let x0 = px.x_of(start as f64);
            let x1 = px.x_of(end as f64).max(x0 + 1);
            let y1 = px.y_of(lo as f64);
            let y0 = px.y_of(hi as f64).min(y1 - 1);
            [(x0, y0), (x1, y1)]
        };
        let gapped = || {
            problem
                .indices()
                .filter(|&i| !problem.gaps().of(i).is_empty())
        };
        for i in gapped() {
            let (b, offset) = (problem.buffer(i), self.plan.offset(i));
            let r = rect(b.start, b.end, offset, offset.saturating_add(b.size));
            screen.draw(&Rectangle::new(r, lighter(color(i)).filled()))?;
            screen.draw(&Rectangle::new(r, color(i).stroke_width(1)))?;
        }
        for i in problem.indices() {
            let (b, offset) = (problem.buffer(i), self.plan.offset(i));
            if !problem.gaps().of(i).is_empty() {
                for p in problem.pieces(i) {
                    let r = rect(p.start, p.end, offset + p.lo, offset + p.hi);
                    screen.draw(&Rectangle::new(r, color(i).filled()))?;
                }
                continue;
            }
            let r = rect(b.start, b.end, offset, offset.saturating_add(b.size));
            screen.draw(&Rectangle::new(r, color(i).filled()))?;
            // A white edge separates neighbours when there is room for it.
            let [(x0, y0), (x1, y1)] = r;
            if x1 - x0 >= 4 && y1 - y0 >= 4 {
                screen.draw(&Rectangle::new(r, WHITE.stroke_width(1)))?;
            }
        }
        Ok(())
    }

    /// Occupancy rasterised into cells, shaded by the share of each cell
    /// in use and merged into rectangles.
    fn draw_cells<DB: DrawingBackend>(
        &self,
        screen: &DrawingArea<DB, Shift>,
        px: &Pixels,
        raster: Raster,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let mut cell = raster.cell.max(1);
        let runs = loop {
            let w = ((px.x.end - px.x.start) / f64::from(cell)).ceil().max(1.0) as usize;
            let h = ((px.y.end - px.y.start) / f64::from(cell)).ceil().max(1.0) as usize;
            let grid = Coverage::of(self.problem, self.plan, px, cell, (w, h));
            let runs = merged_runs(&grid.levels(LEVELS), w, h);
            match raster.max_rectangles {
                Some(max) if runs.len() > max && cell < 64 => cell += (cell + 1) / 2,
                _ => break runs,
            }
        };
        let shades = shades();
        let (ox, oy) = px.origin;
        for r in runs {
            // Row 0 is the lowest addresses, at the bottom of the area.
            let x0 = ox + r.x0 as i32 * cell;
            let x1 = (ox + r.x1 as i32 * cell).min(px.x.end as i32);
            let y1 = (px.y.end as i32) - r.y0 as i32 * cell;
            let y0 = ((px.y.end as i32) - r.y1 as i32 * cell).max(oy);
            screen.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                shades[r.level as usize - 1].filled(),
            ))?;
        }
        Ok(())
    }
}

/// The colour of each level of aggregated cells, from barely used to full.
fn shades() -> Vec<RGBColor> {
    (1..=LEVELS)
        .map(|l| {
            let f = l as f64 / LEVELS as f64;
            let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
            RGBColor(
                mix(LIGHT.0, DARK.0),
                mix(LIGHT.1, DARK.1),
                mix(LIGHT.2, DARK.2),
            )
        })
        .collect()
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Swatch {
    Box(RGBColor),
    /// The shades of aggregated cells side by side.
    Shades,
    Line(RGBColor, bool),
}

/// The chart of a plot: time by addresses, with key points on the
/// address axis.
type Chart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<RangedCoordu64, WithKeyPoints<RangedCoordu64>>>;

/// `name` shortened from the left (with `…`) to fit in `room` pixels in
/// `style`, or empty.
fn shortened<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    name: &str,
    style: &TextStyle,
    room: u32,
) -> Result<String, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut name = name.to_string();
    while !name.is_empty() && area.estimate_text_size(&name, style)?.0 > room {
        let rest: String = name.chars().skip(2).collect();
        name = format!("…{rest}");
        if rest.is_empty() {
            name.clear();
        }
    }
    Ok(name)
}

/// A legend entry's 16 × 12 pixel swatch with its top left corner at
/// `(x, y)`.
fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    match swatch {
        Swatch::Box(color) => {
            area.draw(&Rectangle::new([(x, y), (x + 16, y + 12)], color.filled()))
        }
        Swatch::Shades => {
            for (k, shade) in shades().into_iter().enumerate() {
                let x0 = x + 4 * k as i32;
                area.draw(&Rectangle::new([(x0, y), (x0 + 4, y + 12)], shade.filled()))?;
            }
            Ok(())
        }
        Swatch::Line(color, true) => {
            for dx in [0, 7, 14] {
                area.draw(&PathElement::new(
                    [(x + dx, y + 6), (x + dx + 4, y + 6)],
                    color.stroke_width(1),
                ))?;
            }
            Ok(())
        }
        Swatch::Line(color, false) => area.draw(&PathElement::new(
            [(x, y + 6), (x + 16, y + 6)],
            color.stroke_width(2),
        )),
    }
}

/// `color` three quarters of the way to white: a buffer's idle stretches.
fn lighter(color: RGBColor) -> RGBColor {
    let mix = |c: u8| (u16::from(c) + 3 * 255).div_euclid(4) as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// Scatters buffer indices over the palette so that neighbours (often
/// consecutive) get different colours.
fn spread(i: usize) -> usize {
    ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61) as usize
}

/// Maps data coordinates (time, address) to the plotting area's pixels.
struct Pixels {
    time: Range<f64>,
    top: f64,
    x: Range<f64>,
    y: Range<f64>,
    origin: (i32, i32),
}

impl Pixels {
    fn fx(&self, t: f64) -> f64 {
        self.x.start
            + (t - self.time.start) / (self.time.end - self.time.start)
                * (self.x.end - self.x.start)
    }

    /// From the bottom of the area, in pixels.
    fn fy(&self, address: f64) -> f64 {
        address / self.top * (self.y.end - self.y.start)
    }

    fn x_of(&self, t: f64) -> i32 {
        self.fx(t).round() as i32
    }

    fn y_of(&self, address: f64) -> i32 {
        (self.y.end - self.fy(address)).round() as i32
    }
}

/// The share of each cell covered by buffers, exactly (a buffer covers a
/// cell by the product of its overlaps in time and in address), built with
/// a 2-D difference array: O(n + cells).
struct Coverage {
    w: usize,
    h: usize,
    /// Row-major, row 0 at address 0.
    share: Vec<f64>,
}

impl Coverage {
    fn of(problem: &Problem, plan: &Plan, px: &Pixels, cell: i32, (w, h): (usize, usize)) -> Self {
        let cell = f64::from(cell);
        let mut diff = vec![0.0f64; (w + 1) * (h + 1)];
        let stride = w + 1;
        // What each buffer occupies: its pieces with gaps, else its hull.
        let spans = problem
            .indices()
            .zip(plan.offsets())
            .flat_map(|(i, &offset)| {
                let b = problem.buffer(i);
                let hull = problem
                    .gaps()
                    .of(i)
                    .is_empty()
                    .then_some((b.start, b.end, 0, b.size));
                let pieces = hull
                    .is_none()
                    .then(|| problem.pieces(i).map(|p| (p.start, p.end, p.lo, p.hi)))
                    .into_iter()
                    .flatten();
                hull.into_iter()
                    .chain(pieces)
                    .map(move |(start, end, lo, hi)| {
                        (
                            start,
                            end,
                            offset.saturating_add(lo),
                            offset.saturating_add(hi),
                        )
                    })
            });
        for (start, end, lo, hi) in spans {
            let cx0 = (px.fx(start as f64) - px.x.start) / cell;
            let cx1 = (px.fx(end as f64) - px.x.start) / cell;
            let cy0 = px.fy(lo as f64) / cell;
            let cy1 = px.fy(hi as f64) / cell;
            for (xa, xb, wx) in pieces(cx0, cx1, w).into_iter().flatten() {
                for (ya, yb, wy) in pieces(cy0, cy1, h).into_iter().flatten() {
                    let v = wx * wy;
                    diff[ya * stride + xa] += v;
                    diff[ya * stride + xb] -= v;
                    diff[yb * stride + xa] -= v;
                    diff[yb * stride + xb] += v;
                }
            }
        }
        // Prefix sums along rows, then along columns.
        for row in diff.chunks_mut(stride) {
            for x in 1..stride {
                row[x] += row[x - 1];
            }
        }
        for y in 1..=h {
            for x in 0..stride {
                diff[y * stride + x] += diff[(y - 1) * stride + x];
            }
        }
        let mut share = Vec::with_capacity(w * h);
        for y in 0..h {
            share.extend_from_slice(&diff[y * stride..y * stride + w]);
        }
        Coverage { w, h, share }
    }

    /// Level 0 (unused) to `levels` (full) for each cell.
    fn levels(&self, levels: usize) -> Vec<u8> {
        debug_assert_eq!(self.share.len(), self.w * self.h);
        self.share
            .iter()
            .map(|&s| {
                if s <= 1e-9 {
                    0
                } else {
                    (s.min(1.0) * levels as f64)
                        .ceil()
                        .clamp(1.0, levels as f64) as u8
                }
            })
            .collect()
    }
}

/// The cells that `[a, b)` (in cell units) overlaps among `0..n`, as up to
/// three runs `(from, to, share of each cell)`: a partial first cell, full
/// cells, a partial last cell.
fn pieces(a: f64, b: f64, n: usize) -> [Option<(usize, usize, f64)>; 3] {
    let a = a.clamp(0.0, n as f64);
    let b = b.clamp(0.0, n as f64);
    if b <= a || n == 0 {
        return [None, None, None];
    }
    let first = (a.floor() as usize).min(n - 1);
    let last = ((b.ceil() as usize).max(1) - 1).clamp(first, n - 1);
    if first == last {
        return [Some((first, first + 1, b - a)), None, None];
    }
    let head = Some((first, first + 1, (first + 1) as f64 - a));
    let middle = (last > first + 1).then_some((first + 1, last, 1.0));
    let tail = Some((last, last + 1, b - last as f64));
    [head, middle, tail]
}

/// A rectangle of cells of one level: columns `x0..x1`, rows `y0..y1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
    level: u8,
}

/// Merges equal non-zero cells into horizontal runs, and identical runs of
/// consecutive rows into rectangles.
fn merged_runs(levels: &[u8], w: usize, h: usize) -> Vec<Run> {
    let mut done = Vec::new();
    // Runs open at the previous row, sorted by x0.
    let mut open: Vec<Run> = Vec::new();
    for y in 0..h {
        let row = &levels[y * w..(y + 1) * w];
        let mut current = Vec::new();
        let mut x = 0;
        while x < w {
            let level = row[x];
            let start = x;
            while x < w && row[x] == level {
                x += 1;
            }
            if level > 0 {
                current.push((start, x, level));
            }
        }
        let mut next_open = Vec::with_capacity(current.len());
        let mut previous = open.into_iter().peekable();
        for (x0, x1, level) in current {
            while previous.peek().is_some_and(|r| r.x0 < x0) {
                done.extend(previous.next());
            }
            match previous.peek() {
                Some(r) if r.x0 == x0 && r.x1 == x1 && r.level == level => {
                    let mut r = *r;
                    previous.next();
                    r.y1 = y + 1;
                    next_open.push(r);
                }
                _ => next_open.push(Run {
                    x0,
                    x1,
                    y0: y,
                    y1: y + 1,
                    level,
                }),
            }
        }
        done.extend(previous);
        open = next_open;
    }
    done.extend(open);
    done
}

/// The load profile as a step line over `time`, reduced to the maximum of
/// each of `columns` columns when it has more segments than that.
fn load_steps(profile: &LoadProfile, time: &Range<f64>, columns: usize) -> Vec<(u64, u64)> {
    let segments = profile.loads.len();
    let mut points = Vec::new();
    if segments <= columns * 2 {
        for (k, &load) in profile.loads.iter().enumerate() {
            let (t0, t1) = (profile.times[k], profile.times[k + 1]);
            points.push((t0, load));
            points.push((t1, load));
        }
        return with_ends(points, time);
    }
    let span = time.end - time.start;
    let column =
        |t: f64| (((t - time.start) / span * columns as f64).floor() as usize).min(columns - 1);
    let mut max = vec![0u64; columns];
    for (k, &load) in profile.loads.iter().enumerate() {
        let c0 = column(profile.times[k] as f64);
        // The segment is half-open: its last column holds its end - 1.
        let c1 = column((profile.times[k + 1] as f64 - 1.0).max(profile.times[k] as f64));
        for m in &mut max[c0..=c1] {
            *m = (*m).max(load);
        }
    }
    for (c, &m) in max.iter().enumerate() {
        let t0 = time.start + span * c as f64 / columns as f64;
        let t1 = time.start + span * (c + 1) as f64 / columns as f64;
        points.push((t0.round() as u64, m));
        points.push((t1.round() as u64, m));
    }
    points
}

/// Starts and ends the step line at zero load at the ends of the axis.
fn with_ends(points: Vec<(u64, u64)>, time: &Range<f64>) -> Vec<(u64, u64)> {
    let mut all = Vec::with_capacity(points.len() + 2);
    all.push((time.start as u64, 0));
    all.extend(points);
    all.push((time.end as u64, 0));
    all
}

/// Tick values from 0 to `top` bytes, in steps of 1, 2, 2.5 or 5 × 10^k of
/// the largest binary unit (B, KiB, MiB...) not above `top`, at most 10.
fn byte_ticks(top: f64) -> (Vec<u64>, u64) {
    let mut unit = 1u64;
    while unit < (1 << 60) && (unit * 1024) as f64 <= top {
        unit *= 1024;
    }
    let in_units = top / unit as f64;
    let mut step = 0.1;
    'search: for exponent in -1..=4 {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let s = m * 10f64.powi(exponent);
            // Whole bytes only.
            if unit == 1 && s < 1.0 {
                continue;
            }
            if in_units / s <= 10.0 {
                step = s;
                break 'search;
            }
        }
    }
    let count = (in_units / step).floor() as usize;
    let ticks = (0..=count)
        .map(|k| (k as f64 * step * unit as f64).round() as u64)
        .collect();
    (ticks, unit)
}

/// `0`, `512 B`, `1.5 MiB`: `v` bytes in `unit` (a power of 1024).
fn byte_label(v: f64, unit: u64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let name = match unit {
        1 => "B",
        0x400 => "KiB",
        0x10_0000 => "MiB",
        0x4000_0000 => "GiB",
        0x100_0000_0000 => "TiB",
        0x4_0000_0000_0000 => "PiB",
        _ => "EiB",
    };
    format!("{} {name}", trim(v / unit as f64))
}

/// Up to two decimals, without trailing zeros.
fn trim(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Logical times: `950`, `12k`, `1.5M`.
fn count_label(v: f64) -> String {
    let a = v.abs();
    if a < 10_000.0 {
        trim(v)
    } else if a < 1e6 {
        format!("{}k", trim(v / 1e3))
    } else if a < 1e9 {
        format!("{}M", trim(v / 1e6))
    } else {
        format!("{}G", trim(v / 1e9))
    }
}

/// `1000000` as `1,000,000`.
fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
