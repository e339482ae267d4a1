//! A job file as read: its sections and their `key[=value]` lines, before
//! any option is interpreted.

/// One `key[=value]` line.
#[derive(Clone, Debug)]
pub(super) struct Opt {
    pub(super) key: String,
    pub(super) value: Option<String>,
    pub(super) line: usize,
}

/// A job section with the options it inherited and its own.
pub(super) struct Section {
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) opts: Vec<Opt>,
}
