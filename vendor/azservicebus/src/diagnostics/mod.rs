pub(crate) mod utilities;
