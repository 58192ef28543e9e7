//! `lance.encodings21` and `lance.encodings23` messages: page layouts and compressive encodings.
