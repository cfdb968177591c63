pub mod partition_cli;
