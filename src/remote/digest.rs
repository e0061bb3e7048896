//! Host-key digests the way OpenSSH prints and stores them: `SHA256:` fingerprints in
//! unpadded base64, the base64 keys of `known_hosts` lines, and HMAC-SHA1 of hashed host names
//! (`|1|salt|hash`). Thin names over the RustCrypto and base64 crates.

use base64::Engine;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use hmac::{Hmac, Mac};
use sha1::Sha1;
use sha2::{Digest, Sha256};

/// Standard base64 that reads input with or without its `=` padding.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Unpadded standard base64, as OpenSSH prints fingerprints.
const UNPADDED: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_encode_padding(false),
);

/// The SHA-256 digest of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// The SHA-1 digest of `data`; only for HMAC-SHA1 of hashed known_hosts names.
#[cfg(test)]
fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// HMAC-SHA1 (RFC 2104), as OpenSSH hashes known_hosts names with their salt as the key.
pub fn hmac_sha1(key: &[u8], data: &[u8]) -> [u8; 20] {
    // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha1>::new_from_slice(key) else {
        return [0; 20];
    };
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// Standard base64; `pad` adds the trailing `=` that OpenSSH leaves off fingerprints.
pub fn base64_encode(data: &[u8], pad: bool) -> String {
    if pad {
        STANDARD.encode(data)
    } else {
        UNPADDED.encode(data)
    }
}

/// Decodes standard base64 with or without padding; `None` on any other character.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    LENIENT.decode(text).ok()
}

/// The fingerprint OpenSSH prints for a public key blob: `SHA256:` and unpadded base64.
pub fn fingerprint(key_blob: &[u8]) -> String {
    format!("SHA256:{}", base64_encode(&sha256(key_blob), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha256_known_vectors() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let two_blocks = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(
            hex(&sha256(two_blocks)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 1000])),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }

    #[test]
    fn sha1_and_hmac_known_vectors() {
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        let two_blocks = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(
            hex(&sha1(two_blocks)),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        // RFC 2202 test cases 1, 2 and 6 (a key longer than the block).
        assert_eq!(
            hex(&hmac_sha1(&[0x0b; 20], b"Hi There")),
            "b617318655057264e28bc0b6fb378c8ef146be00"
        );
        assert_eq!(
            hex(&hmac_sha1(b"Jefe", b"what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
        assert_eq!(
            hex(&hmac_sha1(
                &[0xaa; 80],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        );
    }

    #[test]
    fn base64_round_trips() {
        for (plain, encoded) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain, true), encoded);
            assert_eq!(base64_encode(plain, false), encoded.trim_end_matches('='));
            assert_eq!(base64_decode(encoded).as_deref(), Some(plain));
        }
        assert_eq!(base64_decode("Zm9v!"), None);
    }
}
