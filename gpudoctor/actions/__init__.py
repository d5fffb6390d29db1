"""Actions beside the check pipeline: they change the machine (install-cudnn) or exercise it
(smoke-test), return data describing what they did, and end by running the relevant checks."""
