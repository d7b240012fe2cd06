public enum KeyServiceMockPlaceholder {}
