//! End-to-end tests of console, server and agents together (filled by the end-to-end issue).
