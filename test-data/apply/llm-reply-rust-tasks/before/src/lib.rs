use std::collections::HashMap;

pub struct Cache {
    map: HashMap<String, String>,
}

impl Cache {
    pub fn new() -> Self {
        Cache { map: HashMap::new() }
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.map.get(key)
    }
}
