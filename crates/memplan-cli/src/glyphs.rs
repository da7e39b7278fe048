//! Text for bitmaps: a drawing backend wrapper that draws text glyph by
//! glyph with ab_glyph and the embedded DejaVu Sans.

use ab_glyph::{point, Font, FontRef, ScaleFont};
use plotters::prelude::DrawingBackend;
use plotters::style::FontStyle;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};

/// A backend whose text is drawn glyph by glyph with ab_glyph, each glyph
/// at its own side bearing: plotters 0.3.7's ab_glyph path drops the
/// bearing, which spaces letters unevenly in bitmaps. Everything else goes
/// to the inner backend.
pub struct GlyphText<B> {
    inner: B,
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

impl<B: DrawingBackend> GlyphText<B> {
    /// Wraps `inner`; fails only if the embedded font cannot be read.
    pub fn new(inner: B) -> Result<Self, String> {
        let font = |bytes| {
            FontRef::try_from_slice(bytes)
                .map_err(|_| "the embedded font is unreadable".to_string())
        };
        Ok(GlyphText {
            inner,
            regular: font(dejavu::sans::regular())?,
            bold: font(dejavu::sans::bold())?,
        })
    }
}

impl<B: DrawingBackend> DrawingBackend for GlyphText<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    /// As plotters' default (layout box, anchor, rotation), with each
    /// glyph placed at its pixel bounds and the baseline one ascent below
    /// the top.
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        let font = if matches!(style.style(), FontStyle::Bold) {
            &self.bold
        } else {
            &self.regular
        };
        let size = style.size() as f32;
        let font = font.as_scaled(size);
        let mut caret = 0.0f32;
        let mut previous = None;
        let mut pixels = Vec::new();
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                caret += font.kern(p, id);
            }
            previous = Some(id);
            // The baseline one ascent down: the text's top at the anchor.
            let glyph = id.with_scale_and_position(font.scale(), point(caret, font.ascent()));
            caret += font.h_advance(id);
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            pixels.clear();
            outline.draw(|x, y, coverage| pixels.push((x, y, coverage)));
            for &(x, y, coverage) in &pixels {
                let gx = bounds.min.x as i32 + x as i32;
                let gy = bounds.min.y as i32 + y as i32;
                let (tx, ty) = transform.transform(gx + dx - min_x, gy + dy - min_y);
                let (px, py) = (pos.0 + tx, pos.1 + ty);
                if px >= 0 && py >= 0 && px < w as i32 && py < h as i32 {
                    let shade = BackendColor {
                        alpha: color.alpha * f64::from(coverage.clamp(0.0, 1.0)),
                        rgb: color.rgb,
                    };
                    self.inner.draw_pixel((px, py), shade)?;
                }
            }
        }
        Ok(())
    }
}
