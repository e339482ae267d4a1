//! Bar charts of a comparison, drawn with plotters into PNG and SVG. The
//! font (DejaVu Sans) is embedded in the binary: no system font library is
//! used.

use crate::compare::Comparison;
use anyhow::{anyhow, Result};
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

/// The metrics charted, one panel each: (title, value per report).
type Metric = (&'static str, fn(&mmcsim::sim::Report) -> f64);

const METRICS: [Metric; 4] = [
    ("Throughput (IOPS)", |r| r.workload.throughput.iops),
    ("Mean latency (µs)", |r| r.workload.latency_us.mean),
    ("p99 latency (µs)", |r| r.workload.latency_us.p99),
    ("Jain's fairness index", |r| r.workload.fairness.jain),
];

/// Writes `<prefix>.png` and `<prefix>.svg`: one bar per scheduler entry,
/// one panel per metric.
pub fn write(c: &Comparison, prefix: &Path) -> Result<()> {
    register_font()?;
    let n = c.reports.len().max(1) as u32;
    let size = ((n * 140).max(900), 820);
    let png = prefix.with_extension("png");
    let svg = prefix.with_extension("svg");
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        draw(c, &root).map_err(|e| anyhow!("drawing {}: {e}", png.display()))?;
        root.present()
            .map_err(|e| anyhow!("writing {}: {e}", png.display()))?;
    }
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        draw(c, &root).map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
        root.present()
            .map_err(|e| anyhow!("writing {}: {e}", svg.display()))?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    c: &Comparison,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let title = format!("mmcsim: {}", c.workload);
    let root = root.titled(&title, ("sans-serif", 22))?;
    let panels = root.split_evenly((2, 2));
    let labels: Vec<String> = c.reports.iter().map(|o| o.label.clone()).collect();
    let n = labels.len() as u32;
    for (panel, (name, metric)) in panels.iter().zip(METRICS) {
        let values: Vec<f64> = c.reports.iter().map(|o| metric(&o.report)).collect();
        let top = values.iter().cloned().fold(0.0f64, f64::max).max(1e-9) * 1.15;
        let mut chart = ChartBuilder::on(panel)
            .caption(name, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d((0u32..n).into_segmented(), 0.0..top)?;
        let decimals = if top > 20.0 { 0 } else { 2 };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n as usize)
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .y_label_formatter(&|v| format!("{v:.decimals$}"))
            .label_style(("sans-serif", 13))
            .draw()?;
        chart.draw_series(values.iter().enumerate().map(|(i, v)| {
            let i = i as u32;
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), *v),
                ],
                Palette99::pick(i as usize).filled(),
            );
            bar.set_margin(0, 0, 8, 8);
            bar
        }))?;
    }
    Ok(())
}
