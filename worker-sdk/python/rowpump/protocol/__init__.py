"""The wire protocol as a worker speaks it: keys, ready and done messages, durations, the
Lua scripts, and what a success may carry. Mirrors common/ on the C++ side."""
