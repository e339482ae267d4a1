//! Figures drawn with plotters into PNG and SVG: bar charts, latency CDFs,
//! time lines, address-difference scatter plots and crash sweeps' speed
//! against safety, shared by `simctl plot`, `simctl compare --plot` and
//! `simctl reproduce`.
//!
//! A [`Figure`] is data (a title and panels); rendering it is one function
//! per panel kind. The font (DejaVu Sans) is embedded in the binary: no
//! system font library is used. Files are written through a temporary name
//! renamed over the destination, so a failed plot leaves nothing half
//! written.

mod bars;
mod caption;
pub mod crash_safety;
pub mod inputs;
mod legend;
pub mod reqlog;
mod validation;
mod xy;

pub use bars::{Band, BarPanel};
pub use xy::{Mark, Series, XyPanel};

use crate::output::Output;
use anyhow::{anyhow, bail, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

fn register_font() -> Result<()> {
    let mut res = Ok(());
    FONT.call_once(|| {
        res = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        )
        .map_err(|_| anyhow!("the embedded DejaVu Sans font could not be loaded"));
    });
    res
}

/// One panel of a figure.
#[derive(Clone, Debug)]
pub enum Panel {
    /// Labelled bars.
    Bars(BarPanel),
    /// Lines or points on x/y axes.
    Xy(XyPanel),
}

impl Panel {
    fn title(&self) -> &str {
        match self {
            Panel::Bars(b) => &b.title,
            Panel::Xy(x) => &x.title,
        }
    }

    fn has_data(&self) -> bool {
        match self {
            Panel::Bars(b) => b.has_data(),
            Panel::Xy(x) => x.has_data(),
        }
    }

    /// Width the panel wants, pixels.
    fn width(&self) -> u32 {
        match self {
            Panel::Bars(b) => b.width(),
            Panel::Xy(x) => 760 + legend::width(&x.legend(), u32::MAX),
        }
    }
}

/// A titled set of panels, laid out two to a row (a last odd panel takes
/// the whole row).
#[derive(Clone, Debug)]
pub struct Figure {
    /// The figure's title.
    pub title: String,
    panels: Vec<Panel>,
    /// Why panels were left out (they had no data).
    pub omitted: Vec<String>,
}

impl Figure {
    /// A figure of the panels that have data; the others are left out and
    /// named in [`Figure::omitted`]. No panel with data is an error.
    pub fn new(title: impl Into<String>, panels: Vec<Panel>) -> Result<Figure> {
        let title = title.into();
        let (panels, empty): (Vec<Panel>, Vec<Panel>) =
            panels.into_iter().partition(Panel::has_data);
        let omitted: Vec<String> = empty
            .iter()
            .map(|p| format!("panel `{}` left out: no data", p.title()))
            .collect();
        if panels.is_empty() {
            bail!("{title}: nothing to plot ({})", omitted.join("; "));
        }
        Ok(Figure {
            title,
            panels,
            omitted,
        })
    }

    /// True when some bar panel draws an interval cut at zero (a
    /// non-negative amount whose interval, as computed, reaches below it).
    pub fn cuts_at_zero(&self) -> bool {
        self.panels
            .iter()
            .any(|p| matches!(p, Panel::Bars(b) if b.cuts_at_zero()))
    }

    fn rows(&self) -> Vec<&[Panel]> {
        self.panels.chunks(2).collect()
    }

    fn size(&self) -> (u32, u32) {
        let rows = self.rows();
        let w = rows
            .iter()
            .map(|r| r.iter().map(Panel::width).sum::<u32>())
            .max()
            .unwrap_or(640);
        (w, 50 + 420 * rows.len() as u32)
    }

    /// The figure as SVG text.
    pub fn svg(&self) -> Result<String> {
        register_font()?;
        let mut s = String::new();
        {
            let root = SVGBackend::with_string(&mut s, self.size()).into_drawing_area();
            self.draw(&root)
                .map_err(|e| anyhow!("drawing {}: {e}", self.title))?;
            root.present()
                .map_err(|e| anyhow!("drawing {}: {e}", self.title))?;
        }
        Ok(s)
    }

    /// Writes the figure to output `o` opened for `path`, PNG or SVG by
    /// the path's extension.
    pub fn write(&self, o: Output, path: &Path) -> Result<()> {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("svg") => {
                o.write(self.svg()?.as_bytes(), &mut std::io::stdout())
            }
            Some(e) if e.eq_ignore_ascii_case("png") => self.write_png(o),
            _ => bail!(
                "{}: the file name must end in .png or .svg (it picks the format)",
                path.display()
            ),
        }
    }

    fn write_png(&self, o: Output) -> Result<()> {
        register_font()?;
        o.write_via(".png", |tmp| {
            let root = BitMapBackend::new(tmp, self.size()).into_drawing_area();
            self.draw(&root)
                .map_err(|e| anyhow!("drawing {}: {e}", self.title))?;
            root.present()
                .map_err(|e| anyhow!("writing {}: {e}", tmp.display()))
        })
    }

    /// Writes the figure as PNG to `png` and as SVG to `svg`; returns the
    /// SVG text.
    pub fn write_both(&self, png: Output, svg: Output) -> Result<String> {
        let text = self.svg()?;
        svg.write(text.as_bytes(), &mut std::io::stdout())?;
        self.write_png(png)?;
        Ok(text)
    }

    /// Writes `<prefix>.png` and `<prefix>.svg` ([`Figure::write_both`]).
    pub fn write_both_at(&self, prefix: &Path) -> Result<String> {
        let open = |ext: &str| Output::open("", &prefix.with_extension(ext));
        self.write_both(open("png")?, open("svg")?)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let root = root.titled(&self.title, ("sans-serif", 22))?;
        let rows = self.rows();
        for (area, row) in root.split_evenly((rows.len(), 1)).iter().zip(rows) {
            for (cell, panel) in area.split_evenly((1, row.len())).iter().zip(row) {
                match panel {
                    Panel::Bars(b) => b.draw(cell)?,
                    Panel::Xy(x) => x.draw(cell)?,
                }
            }
        }
        Ok(())
    }
}

/// An axis label: whole numbers from 1000 up, otherwise at most three
/// decimals without trailing zeros, scientific below 0.001.
fn tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 0.001 {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short_and_exact_enough() {
        let t: Vec<String> = [0.0, 8.0, 0.05, 0.125, 16.5, 4500.0, 0.0001]
            .into_iter()
            .map(tick)
            .collect();
        assert_eq!(t, ["0", "8", "0.05", "0.125", "16.5", "4500", "1.0e-4"]);
    }

    #[test]
    fn a_figure_leaves_out_empty_panels_and_refuses_to_be_empty() {
        let bars = |v: f64| Panel::Bars(BarPanel::amounts("t", "IOPS", vec![("a".into(), v)]));
        let f = Figure::new("f", vec![bars(1.0), bars(0.0)]).unwrap();
        assert_eq!(f.panels.len(), 1);
        assert_eq!(f.omitted, ["panel `t` left out: no data"]);
        let e = Figure::new("f", vec![bars(f64::NAN)]).unwrap_err();
        assert!(e.to_string().contains("nothing to plot"), "{e}");
    }
}
