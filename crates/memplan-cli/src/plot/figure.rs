//! One panel of the plot: buffers as rectangles (or shades of coverage
//! when there are too many), the load line, the makespan, the legend.

use super::coverage::{merged_runs, Coverage, Pixels};
use super::labels::{byte_label, byte_ticks, count_label, group_digits, load_steps};
use super::{Raster, DETAIL_LIMIT, FONT, LEVELS};
use crate::output::bytes;
use memplan::geometry::sweep::LoadProfile;
use memplan::BufferIdx;
use memplan::{Plan, Problem, Stats};
use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::types::RangedCoordu64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::ops::Range;

/// What is drawn: the problem, its (valid) plan and their statistics.
pub(super) struct Figure<'a> {
    pub(super) problem: &'a Problem,
    pub(super) plan: &'a Plan,
    pub(super) name: String,
    pub(super) stats: Stats,
    pub(super) profile: LoadProfile,
    /// Time axis: first start to last end (half-open time).
    pub(super) time: Range<f64>,
    /// Address axis: 0 to a little above the makespan (and the capacity).
    pub(super) top: f64,
    /// A pool's capacity, drawn as a dashed line.
    pub(super) capacity: Option<u64>,
}

pub(super) const BUFFER_COLORS: [RGBColor; 8] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
];
pub(super) const FIXED_COLOR: RGBColor = RGBColor(0x79, 0x79, 0x79);
pub(super) const LOAD_COLOR: RGBColor = RGBColor(0xd6, 0x27, 0x28);
pub(super) const MAKESPAN_COLOR: RGBColor = RGBColor(0x20, 0x20, 0x20);
/// Aggregated cells, from barely used to full.
pub(super) const LIGHT: (f64, f64, f64) = (0xc6 as f64, 0xdb as f64, 0xef as f64);
pub(super) const DARK: (f64, f64, f64) = (0x08 as f64, 0x45 as f64, 0x94 as f64);

impl<'a> Figure<'a> {
    pub(super) fn new(
        problem: &'a Problem,
        plan: &'a Plan,
        name: String,
        capacity: Option<u64>,
    ) -> Self {
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
    pub(super) fn draw<DB: DrawingBackend>(
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
    pub(super) fn chart<'b, DB: DrawingBackend>(
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
    pub(super) fn draw_levels<DB: DrawingBackend>(
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
    pub(super) fn draw_header<DB: DrawingBackend>(
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
    pub(super) fn stats_line(&self) -> String {
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
    pub(super) fn legend_entries(&self) -> Vec<(&'static str, Swatch)> {
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
    pub(super) fn draw_buffers<DB: DrawingBackend>(
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
    pub(super) fn draw_cells<DB: DrawingBackend>(
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
pub(super) fn shades() -> Vec<RGBColor> {
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
pub(super) enum Swatch {
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
pub(super) fn shortened<DB: DrawingBackend>(
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
pub(super) fn draw_swatch<DB: DrawingBackend>(
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
pub(super) fn lighter(color: RGBColor) -> RGBColor {
    let mix = |c: u8| (u16::from(c) + 3 * 255).div_euclid(4) as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// Scatters buffer indices over the palette so that neighbours (often
/// consecutive) get different colours.
pub(super) fn spread(i: usize) -> usize {
    ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61) as usize
}
