use std::collections::HashMap;

pub struct Cache {
    map: HashMap<String, String>,
    capacity: usize,
}

impl Cache {
    pub fn new(capacity: usize) -> Self {
        Cache { map: HashMap::new(), capacity }
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.map.get(key)
    }

    pub fn insert(&mut self, key: String, value: String) -> bool {
        if self.map.len() >= self.capacity {
            return false;
        }
        self.map.insert(key, value);
        true
    }
}
