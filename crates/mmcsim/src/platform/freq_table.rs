//! A CPU's frequency table (`cpufreq_frequency_table`), ascending, and
//! the kernel's table lookups (`cpufreq_frequency_table_target`).

/// A frequency table, ascending, MHz.
#[derive(Clone, Debug, PartialEq)]
pub struct FreqTable(pub Vec<f64>);

impl FreqTable {
    /// Lowest entry.
    pub fn min(&self) -> f64 {
        self.0[0]
    }

    /// Highest entry.
    pub fn max(&self) -> f64 {
        *self.0.last().expect("non-empty table")
    }

    /// `CPUFREQ_RELATION_L`: the lowest entry at or above `target` (the
    /// maximum when none is).
    pub fn at_or_above(&self, target: f64) -> f64 {
        self.0
            .iter()
            .copied()
            .find(|&f| f >= target)
            .unwrap_or(self.max())
    }

    /// `CPUFREQ_RELATION_H`: the highest entry at or below `target` (the
    /// minimum when none is).
    pub fn at_or_below(&self, target: f64) -> f64 {
        self.0
            .iter()
            .rev()
            .copied()
            .find(|&f| f <= target)
            .unwrap_or(self.min())
    }

    /// Highest entry strictly below `f` (the minimum when none is).
    pub(super) fn below(&self, f: f64) -> f64 {
        self.0
            .iter()
            .rev()
            .copied()
            .find(|&x| x < f)
            .unwrap_or(self.min())
    }

    /// Lowest entry strictly above `f` (the maximum when none is).
    pub(super) fn above(&self, f: f64) -> f64 {
        self.0
            .iter()
            .copied()
            .find(|&x| x > f)
            .unwrap_or(self.max())
    }
}
