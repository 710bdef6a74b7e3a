pub mod processor_error_source;
