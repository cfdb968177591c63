//! numpy-like selections and the planner that maps them to chunks.
