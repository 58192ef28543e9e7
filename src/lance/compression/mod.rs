//! Pure decoders of Lance compressive encodings.
