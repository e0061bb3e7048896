//! A sample's text fields cleaned of what a terminal would act on (see [`sanitize`]).

use crate::remote::sanitize::{needs_cleaning, sanitize};
use crate::telemetry::GpuSample;

/// Sanitizes every text field of a sample parsed from a remote line.
pub(crate) fn sanitize_sample(sample: &mut GpuSample) {
    for field in [&mut sample.uuid, &mut sample.name, &mut sample.bus_id] {
        if needs_cleaning(field) {
            *field = sanitize(field).into();
        }
    }
    for field in [&mut sample.pstate, &mut sample.driver_version]
        .into_iter()
        .flatten()
    {
        if needs_cleaning(field) {
            *field = sanitize(field).into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_fields_are_cleaned() {
        let mut sample = GpuSample {
            name: "\u{1b}[2JNVIDIA H200".into(),
            pstate: Some("P0\u{7}".into()),
            ..GpuSample::default()
        };
        sanitize_sample(&mut sample);
        assert_eq!(&*sample.name, "NVIDIA H200");
        assert_eq!(sample.pstate.as_deref(), Some("P0"));
        let mut sample = GpuSample {
            name: "NVIDIA \u{202E}002H".into(),
            ..GpuSample::default()
        };
        sanitize_sample(&mut sample);
        assert_eq!(&*sample.name, "NVIDIA 002H");
    }
}
