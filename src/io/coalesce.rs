//! Range coalescing: the one place where wanted ranges are merged into fewer requests.
