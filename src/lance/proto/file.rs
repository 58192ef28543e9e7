//! `lance.file` and `lance.file.v2` messages: FileDescriptor, Schema, Field, ColumnMetadata.
