extern "C" int hoff_cuda_stub(void) { return 0; }
