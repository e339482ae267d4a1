//! Device-level behaviour tests on the generic profile and small variants.

use super::*;
