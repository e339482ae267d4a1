//! A panel's caption across the whole panel (chart and legend strip),
//! measured with the embedded font: a caption wider than the panel wraps
//! at spaces onto further lines (at a slightly smaller size) instead of
//! running off the panel's edges.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Caption size of a one-line caption, px.
const SIZE_PX: u32 = 18;
/// Caption size when it wraps, px.
const WRAPPED_PX: u32 = 15;
/// Pixels kept free at each side of the caption.
const SIDE_PX: u32 = 12;
/// Pixels above the first line and below the last.
const PAD_PX: u32 = 6;

/// The caption's lines at `size` px within `width` px: words kept whole,
/// a word wider than the panel on a line of its own.
fn lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
    width: u32,
) -> Vec<String> {
    let font = TextStyle::from(("sans-serif", size).into_font());
    let wide = |s: &str| {
        area.estimate_text_size(s, &font)
            .map_or(s.chars().count() as u32 * size / 2, |(w, _)| w)
            > width
    };
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let tried = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if wide(&tried) && !line.is_empty() {
            out.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = tried;
        }
    }
    out.push(line);
    out
}

/// Draws `text` centred at the top of `area` (wrapped when wider than it)
/// and returns the part of `area` below it.
pub(super) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (w, h) = area.dim_in_pixel();
    let room = w.saturating_sub(2 * SIDE_PX);
    let mut size = SIZE_PX;
    let mut ls = lines(area, text, size, room);
    if ls.len() > 1 {
        size = WRAPPED_PX;
        ls = lines(area, text, size, room);
    }
    let line_px = size + 4;
    let style = TextStyle::from(("sans-serif", size).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, l) in ls.iter().enumerate() {
        let y = (PAD_PX + i as u32 * line_px) as i32;
        area.draw(&Text::new(l.clone(), ((w / 2) as i32, y), style.clone()))?;
    }
    let used = (2 * PAD_PX + ls.len() as u32 * line_px).min(h / 3);
    Ok(area.split_vertically(used).1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caption wider than its panel wraps onto lines that each fit.
    #[test]
    fn a_long_caption_wraps_within_the_panel() {
        super::super::register_font().unwrap();
        let mut s = String::new();
        let root = SVGBackend::with_string(&mut s, (400, 300)).into_drawing_area();
        let text = "galaxy-s2, clock pinned: 16 KiB writes: app alone vs with one CPU hog (boxes: the study's ranges) (mean of 5 seeds)";
        let ls = lines(&root, text, WRAPPED_PX, 376);
        assert!(ls.len() >= 2, "{ls:?}");
        let font = TextStyle::from(("sans-serif", WRAPPED_PX).into_font());
        for l in &ls {
            assert!(root.estimate_text_size(l, &font).unwrap().0 <= 376, "{l}");
        }
        assert_eq!(ls.join(" "), text, "no word lost");
        assert_eq!(lines(&root, "short", SIZE_PX, 376), ["short"]);
    }
}
