public enum CredentialVaultPlaceholder {}
