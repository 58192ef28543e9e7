//! Page layouts: planners (which byte ranges a row selection needs) and decoders.
