//! Rules the matcher falls back to when no catalog pattern owns a line.

use crate::rule_id::ids;

pub const NO_KERNEL_LINE: &str = ids::DEVICE_ASSERT_NO_KERNEL_LINE.as_str();
pub const UNRECOGNISED_ASSERT: &str = ids::UNRECOGNISED_DEVICE_ASSERT.as_str();
pub const INDUCTOR_ASSERT: &str = ids::INDUCTOR_DEVICE_ASSERT.as_str();
pub const CUSTOM_KERNEL: &str = ids::CUSTOM_KERNEL_ASSERT.as_str();
