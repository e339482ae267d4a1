//! Legends beside the chart, never over the data: a panel with named
//! series gives up a strip on its right (as wide as its longest label, at
//! most a third of the panel) and lists each series there with its colour.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Pixels per character of a 13 px legend label (DejaVu Sans, average).
const CHAR_PX: u32 = 7;
/// Pixels of the colour swatch, the gap after it and the margins.
const SWATCH_PX: u32 = 44;
/// Pixels between two entries.
const LINE_PX: i32 = 20;
/// Pixels from the strip's top (under the caption) to the first entry.
const TOP_PX: i32 = 24;

/// Width of the legend strip for `entries` within a panel `width` px wide
/// (0 without entries).
pub(super) fn width(entries: &[(String, RGBAColor)], width: u32) -> u32 {
    let longest = entries.iter().map(|(l, _)| l.chars().count() as u32).max();
    longest.map_or(0, |n| (n * CHAR_PX + SWATCH_PX).min(width / 3))
}

/// Splits `area` into the chart's part and, with entries, the legend's
/// strip on the right.
pub(super) fn split<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBAColor)],
) -> (DrawingArea<DB, Shift>, Option<DrawingArea<DB, Shift>>) {
    let (w, _) = area.dim_in_pixel();
    let legend = width(entries, w);
    if legend == 0 {
        return (area.clone(), None);
    }
    let (chart, strip) = area.split_horizontally(w - legend);
    (chart, Some(strip))
}

/// Draws `entries` (label, colour) down the strip `area`; a label longer
/// than the strip is cut with an ellipsis.
pub(super) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, RGBAColor)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (w, _) = area.dim_in_pixel();
    let fit = (w.saturating_sub(SWATCH_PX) / CHAR_PX).max(4) as usize;
    let style = TextStyle::from(("sans-serif", 13).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, colour)) in entries.iter().enumerate() {
        let y = TOP_PX + i as i32 * LINE_PX;
        area.draw(&Rectangle::new([(6, y - 5), (20, y + 5)], colour.filled()))?;
        let text = if label.chars().count() > fit {
            let mut t: String = label.chars().take(fit - 1).collect();
            t.push('…');
            t
        } else {
            label.clone()
        };
        area.draw(&Text::new(text, (26, y), style.clone()))?;
    }
    Ok(())
}
