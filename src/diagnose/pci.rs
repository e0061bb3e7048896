//! PCI addresses as one form, so that kernel tuples (`PCI:0000:3b:00`) and nvidia-smi bus ids
//! (`00000000:3B:00.0`) name the same GPU alike.

/// `PCI:0000:3B:00`, `0000:3b:00.0`, `00000000:3B:00.0` -> `0000:3b:00`: the domain as four
/// digits, no function, lower case, so kernel tuples and nvidia-smi bus ids compare equal.
pub fn normalize_pci(raw: &str) -> Option<String> {
    let raw = raw.trim().trim_end_matches(':');
    let raw = raw.strip_prefix("PCI:").unwrap_or(raw);
    let raw = raw.split('.').next()?;
    let parts: Vec<&str> = raw.split(':').collect();
    let [domain, bus, device] = parts.as_slice() else {
        return None;
    };
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !(hex(domain) && hex(bus) && hex(device)) {
        return None;
    }
    let domain = u32::from_str_radix(domain, 16).ok()?;
    Some(format!(
        "{domain:04x}:{}:{}",
        bus.to_ascii_lowercase(),
        device.to_ascii_lowercase()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_smi_and_kernel_bus_ids_alike() {
        assert_eq!(
            normalize_pci("00000000:3B:00.0").as_deref(),
            Some("0000:3b:00")
        );
        assert_eq!(
            normalize_pci("PCI:0000:3b:00").as_deref(),
            Some("0000:3b:00")
        );
        assert_eq!(normalize_pci("GPU-1234"), None);
    }
}
