/// One effective setting and its source.
struct Setting {
    let value: String?
    let source: SettingSource
}
