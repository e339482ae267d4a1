//! The simctl crate's integration tests, one binary (as ripgrep does):
//! a module per area, end to end through the real `simctl` binary where a
//! command or report key is named. `common` holds the shared helpers
//! (repository root, running simctl, `../shared` prerequisites).

mod common;

mod alloc_count;
mod androbench;
mod anywhere;
mod architecture;
mod blkmq;
mod blktrace_bin;
mod busy_poll;
mod calibrate;
mod check;
mod cli;
mod compare;
mod cpu;
mod crash;
mod crash_sweep;
mod csv_output;
mod device_config;
mod device_depth;
mod device_state;
mod docs;
mod exit_codes;
mod ext4;
mod fio_job;
mod fio_options;
mod fuse;
mod golden;
mod hostile_inputs;
mod hybrid;
mod import_cycles;
mod integrity;
mod nexus5;
mod phones;
mod plot;
mod plots;
mod python;
mod replay;
mod replay_backlog;
mod reproduce;
mod run_queue;
mod schedulers;
mod seed_findings;
mod slurm;
mod sqlite;
mod sweep;
mod traces;
mod validation;
mod vfat;
mod write_completion;
mod writes;
