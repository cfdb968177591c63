//! HDF5 raw-data chunk-cache simulator and trace analysis: pure logic.
