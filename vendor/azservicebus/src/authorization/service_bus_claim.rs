pub const MANAGE: &str = "Manage";
pub const SEND: &str = "Send";
pub const LISTEN: &str = "Listen";
