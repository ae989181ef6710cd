namespace rt::prof { const char* version() { return "0.1.0"; } }
