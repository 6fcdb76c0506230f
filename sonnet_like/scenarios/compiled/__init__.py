"""The compiled step: counters, precision, verdicts, the NaN guard's checks and the pre-flight loss checks."""
