//! simctl: the command-line front end of mmcsim.
